"""RapidOCR's ONNX models with their hard-swish activations written as two nodes, not four.

Why: Paddle2ONNX spells ``hardswish(x) = x * clip(x + 3, 0, 6) / 6`` as Add, Clip, Mul and Div.
ONNX Runtime fuses none of them, so each activation of the PP-OCRv4 models walks its feature
map four times (a third of the recogniser's time goes to such element-wise nodes). The same
function as ``x * HardSigmoid(x)`` (alpha 1/6, beta 1/2) walks it twice. The two spellings
round differently in the last bits (probabilities move by ~1e-4 at most), so the band reader
uses the rewritten models and ``bench/bench_ocr.py`` compares it with RapidOCR's own pass.
Needs the ``onnx`` package (in the ``ocr`` extra); without it, models load unchanged.

Importing ``onnx`` costs ~0.8 s of CPU (its ``ml_dtypes`` dependency), more than the rewrite
saves a short run, and every Ray actor and process would pay it. So a rewritten model is kept
on disk (``fused_model``), named by the hash of the file it came from, in ``$DIBENCH_CACHE``
(default ``$XDG_CACHE_HOME/dibench``, else ``~/.cache/dibench``): only the first process on a
machine imports ``onnx``.
"""

from __future__ import annotations

import functools
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from dibench._fs import atomic_write, sha256_file

__all__ = ["cache_dir", "fuse_hardswish", "fused_model"]

REWRITE = "hsig1"  # names the rewrite in cached files: change it when _rewrite changes


def _scalars(graph: Any) -> dict[str, float]:
    """Names of one-element constants (Constant nodes and initializers) and their values."""
    from onnx import numpy_helper

    out: dict[str, float] = {}
    for node in graph.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            arr = numpy_helper.to_array(node.attribute[0].t)
            if arr.size == 1:
                out[node.output[0]] = float(arr.reshape(-1)[0])
    for init in graph.initializer:
        if all(d == 1 for d in init.dims):  # not the weights: they are never one number
            out[init.name] = float(numpy_helper.to_array(init).reshape(-1)[0])
    return out


def _rewrite(model: Any) -> int:
    """Replace each ``Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)`` in ``model`` in place; count."""
    from onnx import helper

    graph = model.graph
    value = _scalars(graph)
    users: dict[str, list[Any]] = defaultdict(list)
    for node in graph.node:
        for name in node.input:
            users[name].append(node)

    def only_user(name: str, op: str) -> Any | None:
        got = users.get(name, [])
        return got[0] if len(got) == 1 and got[0].op_type == op else None

    replace: dict[int, list[Any]] = {}
    drop: set[int] = set()
    for add in graph.node:
        if add.op_type != "Add" or len(add.input) != 2 or value.get(add.input[1]) != 3.0:
            continue
        x = add.input[0]
        clip = only_user(add.output[0], "Clip")
        if clip is None or len(clip.input) != 3:
            continue
        if value.get(clip.input[1]) != 0.0 or value.get(clip.input[2]) != 6.0:
            continue
        mul = only_user(clip.output[0], "Mul")
        if mul is None or sorted(mul.input) != sorted([x, clip.output[0]]):
            continue
        div = only_user(mul.output[0], "Div")
        if div is None or value.get(div.input[1]) != 6.0:
            continue
        gate = f"{add.output[0]}/hardsigmoid"
        replace[id(add)] = [
            helper.make_node("HardSigmoid", [x], [gate], alpha=1 / 6, beta=0.5),
            helper.make_node("Mul", [x, gate], [div.output[0]]),
        ]
        drop |= {id(clip), id(mul), id(div)}
    nodes = []
    for node in graph.node:
        if id(node) in replace:
            nodes.extend(replace[id(node)])
        elif id(node) not in drop:
            nodes.append(node)
    used = {name for node in nodes for name in node.input}
    nodes = [n for n in nodes if not (n.op_type == "Constant" and n.output[0] not in used)]
    inits = [t for t in graph.initializer if t.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(inits)
    return len(replace)


@functools.cache
def fuse_hardswish(path: str) -> bytes | None:
    """The model at ``path`` with its hard-swish activations rewritten, serialised; None when
    ``onnx`` is missing or the model has none (use the file as it is)."""
    try:
        import onnx
    except ImportError:
        return None
    model = onnx.load(path)
    if not _rewrite(model):
        return None
    onnx.checker.check_model(model)
    return model.SerializeToString()


def cache_dir() -> Path:
    """Where DIBench keeps files it derives from installed packages (never downloads)."""
    env = os.environ.get("DIBENCH_CACHE", "").strip()
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "dibench"


@functools.cache
def fused_model(path: str) -> str | bytes:
    """What to load for the model at ``path``: the rewritten model's file in the cache (made
    now if missing), its bytes when the cache cannot be written, or ``path`` itself when there
    is nothing to rewrite (no ``onnx``, no hard-swish)."""
    name = f"{Path(path).stem}-{sha256_file(path)[:20]}-{REWRITE}.onnx"
    folder = cache_dir() / "ocr-models"
    cached = folder / name
    if cached.is_file():
        return str(cached)
    fused = fuse_hardswish(path)
    if fused is None:
        return path
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(cached, fused)  # whole or not at all, whoever else writes it at once
    except OSError:
        return fused
    return str(cached)
