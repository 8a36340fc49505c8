"""The runner's hot path: rows committed in batches on the store thread with each run's replies
recorded before its row, and the shown-image cache hit by repeats (screens composed only when
read: tests/screens)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest
from PIL import Image

from dibench import screens
from dibench.adapters import make_adapter, show
from dibench.dataset import Dataset
from dibench.providers import RecordingProvider, make_provider
from dibench.runner import Condition, ResultStore, RunConfig, run_condition
from dibench.runner._store import StoreError
from dibench.testing import FakeChatServer


def _ids(ds: Dataset) -> list[str]:
    benign = next(iter(ds.benign))
    injected = [i for i in ds.injected_ids() if i.startswith(benign + ".")][:3]
    return [benign, *injected]


class _FailingStore(ResultStore):
    """A store whose disk fills up after ``ok`` commits (batches of rows)."""

    def __init__(self, path: Path, ok: int) -> None:
        super().__init__(path)
        self.ok = ok
        self.batches: list[int] = []

    def put_many(self, condition, runs, refs=None) -> None:  # type: ignore[no-untyped-def]
        if self.ok <= 0:
            raise StoreError(f"{self.path}: database or disk is full")
        self.ok -= 1
        super().put_many(condition, runs, refs)
        self.batches.append(len(runs))


def _run(ds: Dataset, store: ResultStore, url: str, replies: Path) -> None:
    provider = RecordingProvider(
        make_provider("openai:fake-vl", base_url=url, api_key_env="HOT_PATH_KEY"), replies
    )

    async def go() -> None:
        try:
            await run_condition(
                ds, store, make_adapter("direct"), provider,
                RunConfig(repeats=2, limit=2, concurrency=8),
                condition=Condition("direct", "openai:fake-vl"), recorder=provider,
            )  # fmt: skip
        finally:
            await provider.aclose()

    asyncio.run(go())


def _recorded(replies: Path) -> set[tuple[str, int]]:
    if not replies.exists():
        return set()
    lines = replies.read_bytes().splitlines()
    return {(r["instance_id"], r["repeat"]) for r in map(orjson.loads, lines)}


def test_every_stored_row_has_its_replies_recorded(
    small_dataset: Dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOT_PATH_KEY", "sk-test")
    with FakeChatServer(reply="Answer: 1") as srv:
        with ResultStore(tmp_path / "ok.sqlite") as store:
            _run(small_dataset, store, srv.base_url, tmp_path / "ok.jsonl")
            rows = {(r.instance_id, r.repeat) for r in store.rows()}
        assert len(rows) > 10
        assert _recorded(tmp_path / "ok.jsonl") == rows

        total = len(rows)
        with _FailingStore(tmp_path / "full.sqlite", ok=2) as store:
            with pytest.raises(StoreError, match="disk is full"):
                _run(small_dataset, store, srv.base_url, tmp_path / "full.jsonl")
            rows = {(r.instance_id, r.repeat) for r in store.rows()}
            committed = sum(store.batches)
        assert len(store.batches) == 2  # the third commit failed, and the run stopped there
        assert 0 < len(rows) == committed < total
        assert rows <= _recorded(tmp_path / "full.jsonl")  # no stored row lacks its replies


def test_repeats_of_a_screen_share_one_shown_image(small_dataset: Dataset) -> None:
    iid = _ids(small_dataset)[1]
    inp = screens.agent_input(small_dataset, iid, 1)

    def half(im: Image.Image) -> tuple[Image.Image, None]:
        return im.resize((im.width // 2, im.height // 2)), None

    async def go() -> tuple:
        a = await show(inp.screenshot, "raw", None, inp.screenshot_png)
        b = await show(inp.screenshot, "raw", None, inp.screenshot_png)
        c = await show(inp.screenshot, "half", half, inp.screenshot_png)
        e = await show(inp.screenshot, "half", half, inp.screenshot_png)
        f = await show(inp.screenshot, "half", half, bytes(inp.screenshot_png))  # equal bytes
        d = await show(inp.screenshot, "raw", None, inp.screenshot_png, jpeg=75)
        return a, b, c, e, f, d

    a, b, c, e, f, d = asyncio.run(go())
    # the screen's own PNG is sent as it is: the very bytes object, never copied or re-encoded
    assert a.png is b.png is inp.screenshot_png
    assert (a.sx, a.sy) == (1.0, 1.0)
    # a derived image is made once per screen and variant, found again by bytes or content
    assert c is e is f
    assert c.part.width == inp.screenshot.width // 2
    assert d.part.mime == "image/jpeg" and d.png != a.png
