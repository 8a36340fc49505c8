"""Shared fixtures: one small real dataset generated once per test session."""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import gc
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PIL import Image

# Every package that registers built-ins is imported here, so the per-test registry snapshot
# already holds them (a built-in first registered inside a test would vanish after it).
import dibench.adapters
import dibench.apps
import dibench.defenses
import dibench.probes
import dibench.providers
import dibench.sim  # noqa: F401
from dibench._cache import LruCache
from dibench._registry import Registry
from dibench.dataset import Dataset
from dibench.generate import GenerateConfig, generate

# Screens are multi-megabyte bitmaps made and dropped by the thousand in one test process.
# glibc raises its mmap threshold after each such free, so later bitmaps land on the heap and
# the freed space is kept: a worker grew to 3.4 GB by the end of the suite (trimming the heap
# after each test instead still peaked at 3.36 GB). A fixed 1 MiB threshold gives every bitmap
# its own mapping, returned to the system when it is freed. Each fresh mapping costs page
# faults, so Pillow keeps a few freed image blocks for the next image instead (measured on the
# check of the session dataset: system time 10.9 s -> 5.4 s, peak unchanged). The variables
# reach the workers and the processes tests start; mallopt and set_blocks_max set this one.
_MMAP_THRESHOLD = 1 << 20
_PIL_BLOCKS = 4
os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", str(_MMAP_THRESHOLD))
os.environ.setdefault("PILLOW_BLOCKS_MAX", str(_PIL_BLOCKS))
os.environ.setdefault("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1")
# A command whose stderr is not a terminal prints a progress line every 30 s; a test that reads
# a command's stderr must not see one because the machine ran slow that day
# (tests/runner/test_progress_lines.py turns them back on)
os.environ["DIBENCH_PROGRESS"] = "0"
# The suite starts a few hundred Python processes (CLI tests, servers, Ray workers); with
# PYTHONDONTWRITEBYTECODE set, each one compiled dibench and rewrote the test modules from
# source again. The workers and every process they start write bytecode beside the sources
# (``__pycache__``, ignored by git) instead. Not into a PYTHONPYCACHEPREFIX folder: Python then
# reads bytecode only there, so every installed package (Ray, torch, inspect_ai, ...) was
# compiled afresh on a new machine, 12 s of CPU per process importing them before any hit.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
_libc = ctypes.util.find_library("c")
if _libc and hasattr(ctypes.CDLL(_libc), "mallopt"):
    ctypes.CDLL(_libc).mallopt(-3, _MMAP_THRESHOLD)  # M_MMAP_THRESHOLD
Image.core.set_blocks_max(_PIL_BLOCKS)

SMALL = GenerateConfig(seed=7, benign=30)  # 30 states: all 10 apps, 3 categories, en + zh


@pytest.fixture(autouse=True)
def _isolated_registries() -> Iterator[None]:
    """Components a test registers (its own probes, defenses, ...) vanish after it."""
    saved = [(r, r.snapshot()) for r in list(Registry.instances)]
    yield
    for r, state in saved:
        r.restore(state)


@pytest.fixture(scope="module", autouse=True)
def _caches_dropped_after_each_file() -> Iterator[None]:
    """A worker runs a hundred test files; the module caches of screens would otherwise keep
    the last file's (about 400 MB in a worker) while the next file builds its own."""
    yield
    LruCache.clear_bulky()


@pytest.fixture(scope="session", autouse=True)
def _private_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """onnxruntime and friends write caches under HOME; keep tests off the user's. The xdist
    workers of a session share one folder, beside their base temps: the OCR models' rewrite is
    then made (with an ``onnx`` import) by the first worker only, and read by the others."""
    if "XDG_CACHE_HOME" in os.environ:
        return
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        folder = tmp_path_factory.mktemp("cache")
    else:
        folder = tmp_path_factory.getbasetemp().parent / "cache"
        folder.mkdir(exist_ok=True)
    os.environ["XDG_CACHE_HOME"] = str(folder)


def _manifest(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def shared_folder(
    factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object], inside: str
) -> Iterator[Path]:
    """``build(folder)`` run once per test session, even across xdist workers; yields
    ``folder / inside``, which tests must only read.

    Under xdist each worker has its own session, so a session fixture built everything once
    per worker. Here the folder lies beside the workers' base temps, under a file lock: the
    first worker builds it and writes a marker last, the others wait on the lock and reuse
    it (a worker that died mid-build leaves no marker; the next one builds afresh). After the
    session the folder's files are checked unchanged: a test that writes into it fails there
    (and must work on a copy).
    """
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        folder = factory.mktemp(name)
        build(folder)
    else:
        shared = factory.getbasetemp().parent
        folder = shared / f"shared-{name}"
        with open(shared / f"shared-{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (shared / f"shared-{name}.done").exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                build(folder)
                (shared / f"shared-{name}.done").write_text("built\n", encoding="utf-8")
            fcntl.flock(lock, fcntl.LOCK_UN)
    before = _manifest(folder)
    yield folder / inside
    after = _manifest(folder)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"tests wrote into the shared {name} folder: {changed[:8]}"


@pytest.fixture(scope="session")
def small_dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from shared_folder(
        tmp_path_factory, "data", lambda out: generate(out / "small", SMALL, workers=2), "small"
    )


# 8 low-resolution states with three title probes: the attack tests search it, the report
# tests run offline agents over it (runs take seconds)
D8 = GenerateConfig(
    seed=3, benign=8, probes=("naive", "context_ignore", "combined"), width=540, height=1170
)


@pytest.fixture(scope="session")
def d8_dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from shared_folder(
        tmp_path_factory, "d8", lambda out: generate(out / "d8", D8, workers=1), "d8"
    )


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The wheel of this tree's tracked files, built once per session for the tests that read
    or install it, even when their files run in different xdist workers (each built its own,
    about 1 s each); skipped where setuptools cannot build it, as tests/test_packaging.py says."""
    from tests.test_packaging import build

    for dist in shared_folder(tmp_path_factory, "wheel", lambda f: build(f, "wheel"), "dist"):
        (wheel,) = dist.glob("*.whl")
        yield wheel


@pytest.fixture(scope="session")
def small_dataset(small_dataset_dir: Path) -> Dataset:
    return Dataset.open(small_dataset_dir)


# ---- the order of files: longest first
#
# Under ``-n 2 --dist worksteal`` (the README's command) xdist first deals the tests out in
# order, then an idle worker takes the tail of a busy one's queue; with the default order a
# file of a few long tests (the Ray cluster's) starts late and the other worker idles while it
# ends. Files come longest first instead (the longest-processing-time rule), from the per-file
# seconds in durations.json; a file not listed there goes last.
# `DIBENCH_RECORD_DURATIONS=1 python -m pytest -n 2 --dist worksteal` rewrites it.
# A stale list costs only balance: a file's tests keep their own order.

_DURATIONS = Path(__file__).with_name("durations.json")
_spent: dict[str, float] = {}

# ---- the quick lane: ``-m "not slow"``
#
# A test is slow when it carries ``@pytest.mark.slow``, when its last recorded run (setup, call
# and teardown) took at least SLOW_TEST_SECONDS (slow_tests.json, rewritten with
# durations.json), or when its whole file took at least SLOW_FILE_SECONDS (durations.json: a file
# of many quick tests of one heavy subject, the Ray cluster's, inspect's). Measured, not
# hand-kept, so the lane stays quick as tests change; a test or file not recorded yet counts as
# quick until the next recording. The README's command and CI run every test.

_SLOW = Path(__file__).with_name("slow_tests.json")
SLOW_TEST_SECONDS = 1.0
SLOW_FILE_SECONDS = 3.0
_per_test: dict[str, float] = {}


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_unconfigure(config: pytest.Config) -> None:
    """pytest ends a session with five full garbage collections, so that the finalizers of
    cycles left behind run and any exception they raise is reported. One collection here runs
    them (and is reported the same way); frozen after it, the heap a worker built up over
    half the suite is not walked four more times (a process ending on 2 million objects: 5.4
    s -> 1.5 s from start to exit, the same warning)."""
    gc.collect()
    gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    try:
        slow = set(json.loads(_SLOW.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        slow = set()
    try:
        seconds: dict[str, float] = json.loads(_DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seconds = {}
    for item in items:
        heavy = seconds.get(item.nodeid.split("::", 1)[0], 0.0) >= SLOW_FILE_SECONDS
        if item.nodeid in slow or heavy:
            item.add_marker(pytest.mark.slow)
    if not seconds:
        return
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        first.setdefault(item.nodeid.split("::", 1)[0], i)
    items.sort(
        key=lambda it: (
            -seconds.get(f := it.nodeid.split("::", 1)[0], 0.0),
            first[f],
        )
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get("DIBENCH_RECORD_DURATIONS"):
        f = report.nodeid.split("::", 1)[0]
        _spent[f] = _spent.get(f, 0.0) + report.duration
        _per_test[report.nodeid] = _per_test.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _spent and os.environ.get("PYTEST_XDIST_WORKER") is None:
        ordered = dict(sorted(((f, round(s, 1)) for f, s in _spent.items()), key=lambda x: -x[1]))
        _DURATIONS.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")
        slow = sorted(n for n, s in _per_test.items() if s >= SLOW_TEST_SECONDS)
        _SLOW.write_text(json.dumps(slow, indent=1) + "\n", encoding="utf-8")
