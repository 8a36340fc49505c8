"""The pipeline-check agents (oracle, random) and the plumbing every offline agent shares."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image, ImageDraw

from dibench import screens
from dibench.adapters import candidate_at
from dibench.dataset import Box, Dataset
from dibench.ocr import OcrLine
from dibench.providers import PROVIDERS, Message, Observation, Request, TextPart, make_provider
from dibench.providers._offline import OcrCache, reply
from dibench.render import font


@pytest.fixture(scope="module")
def dataset(small_dataset: Dataset) -> Dataset:
    """The session's small generated dataset (30 states, every app and probe)."""
    return small_dataset


_SHOWN: dict[tuple[str, str], Observation] = {}


@pytest.fixture(scope="module", autouse=True)
def _forget_shown() -> Iterator[None]:
    """The memo holds full screenshots (~7 MB each): drop them once the module is done."""
    yield
    _SHOWN.clear()


def request(ds: Dataset, iid: str, seed: int = 1, answer: Any = None) -> Request:
    """What an adapter sends for instance ``iid``: the observation and a reply renderer."""
    key = (str(ds.root), iid)
    if key not in _SHOWN:
        inst = ds.instance(iid)
        _SHOWN[key] = Observation(
            instruction=inst.instruction,
            screenshot=screens.screenshot(ds, iid),
            language=inst.state.language,
            ui=screens.ui(ds, iid),
            candidate_boxes={c.id: c.boxes["card"] for c in inst.candidates},
            acceptable=inst.acceptable,
        )
    obs = _SHOWN[key]
    msg = Message("user", (TextPart(obs.instruction),))
    return Request((msg,), seed=seed, instance_id=ds.key(iid), observation=obs, answer=answer)


def tapped(ds: Dataset, iid: str, text: str) -> str | None:
    """The candidate under a plain 'tap(x, y)' reply."""
    assert text.startswith("tap("), text
    x, y = (int(v) for v in text[4:-1].split(","))
    return candidate_at({c.id: c.boxes["card"] for c in ds.instance(iid).candidates}, x, y)


def test_offline_agents_are_registered() -> None:
    for name in ("oracle", "random", "ocr-agent"):
        assert name in PROVIDERS
        assert make_provider(name).name == name
    assert make_provider("ocr-agent:rapidocr").describe()["engine"] == "rapidocr"


def test_oracle_always_picks_an_acceptable_candidate(dataset: Dataset) -> None:
    oracle = make_provider("oracle")
    ids = list(dataset.benign) + dataset.injected_ids()[::40]
    for iid in ids:
        text = asyncio.run(oracle.complete(request(dataset, iid)))
        assert tapped(dataset, iid, text.text) in dataset.instance(iid).acceptable


def test_replies_go_through_the_adapters_renderer(dataset: Dataset) -> None:
    seen: list[tuple[Any, ...]] = []

    def answer(action: tuple[Any, ...]) -> str:
        seen.append(action)
        return f"Action: {action[0]}"

    iid = next(iter(dataset.benign))
    done = asyncio.run(make_provider("oracle").complete(request(dataset, iid, answer=answer)))
    assert done.text == "Action: tap"
    assert seen[0][0] == "tap" and len(seen[0]) == 3
    bare = Request((Message("user", (TextPart("hi"),)),), seed=1)
    for name in ("oracle", "random", "ocr-agent"):
        assert asyncio.run(make_provider(name).complete(bare)).text.startswith("none(")
    assert reply(bare, ("tap", 10.6, 20.2)) == "tap(10, 20)"


def test_random_is_uniform_over_candidates() -> None:
    boxes = {f"c{i}": Box(0, 100 * i, 500, 100 * i + 90) for i in range(1, 7)}
    img = Image.new("RGB", (500, 700), "white")
    obs = Observation("pick one", img, "en", candidate_boxes=boxes)
    agent = make_provider("random")
    counts: Counter[str | None] = Counter()
    n = 1200
    for seed in range(n):
        req = Request((), seed=seed, instance_id="shop-000", observation=obs)
        text = asyncio.run(agent.complete(req)).text
        x, y = (int(v) for v in text[4:-1].split(","))
        counts[candidate_at(boxes, x, y)] += 1
    assert set(counts) == set(boxes)
    expected = n / len(boxes)
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 20.5  # chi-square, 5 degrees of freedom, p = 0.001


def test_random_picks_the_same_candidate_for_a_benign_and_injected_pair(dataset: Dataset) -> None:
    agent = make_provider("random")
    pairs = 0
    for iid in dataset.injected_ids()[::40]:
        benign = dataset.instance(iid).benign_id
        for seed in (1, 2, 3):
            a = asyncio.run(agent.complete(request(dataset, benign, seed))).text
            b = asyncio.run(agent.complete(request(dataset, iid, seed))).text
            assert tapped(dataset, benign, a) == tapped(dataset, iid, b)
        pairs += 1
    assert pairs > 10
    # ... while different seeds do explore different candidates
    benign = next(iter(dataset.benign))
    picks = {asyncio.run(agent.complete(request(dataset, benign, s))).text for s in range(30)}
    assert len(picks) > 2


class CountingEngine:
    """A real OCR engine, counted and held at a gate: how often does the cache let reads through?"""

    def __init__(self) -> None:
        from dibench.ocr import get_engine

        self.inner = get_engine()
        self.calls = 0
        self.gate = threading.Event()
        self.lock = threading.Lock()

    def read(self, image: Image.Image) -> list[Any]:
        with self.lock:
            self.calls += 1
        self.gate.wait(10)
        return self.inner.read(image)


def test_ocr_cache_reads_each_screen_once_and_stays_bounded() -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    engine = CountingEngine()
    cache = OcrCache(engine, maxsize=2)  # type: ignore[arg-type]
    images = []
    for word in ("Alpha 12", "Bravo 34", "Charlie 56"):
        img = Image.new("RGB", (320, 60), "white")
        ImageDraw.Draw(img).text((10, 12), word, font=font("sans", 28), fill="black")
        images.append(img)
    results: list[tuple[OcrLine, ...]] = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.read(images[0].copy())))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    while engine.calls == 0:  # the first reader is inside the engine, the others queue on it
        time.sleep(0.01)
    time.sleep(0.1)
    engine.gate.set()
    for t in threads:
        t.join()
    assert engine.calls == 1  # four concurrent asks for one screen: one OCR pass
    assert [[ln.text for ln in r] for r in results] == [["Alpha 12"]] * 4
    cache.read(images[1])
    cache.read(images[2])  # evicts the least recently used (images[0])
    assert len(cache) == 2 and engine.calls == 3
    cache.read(images[0])
    assert engine.calls == 4
