"""Record a run through a real provider, replay it without the model, and reject bad files."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from dibench.providers import (
    Completion,
    InfraError,
    Message,
    Provider,
    RecordingProvider,
    ReplayFormatError,
    ReplayMissing,
    ReplayProvider,
    Request,
    TextPart,
    load_replay,
    make_provider,
)
from dibench.testing import FakeChatServer, Fault


def req(instance_id: str, repeat: int, call: int, text: str = "") -> Request:
    content = (TextPart(text or f"{instance_id}/{repeat}/{call}"),)
    return Request(
        messages=(Message("user", content),),
        seed=repeat,
        instance_id=instance_id,
        repeat=repeat,
        call=call,
    )


class Echo(Provider):
    """A tiny in-process model: replies with what it was asked (for recorder-only tests)."""

    name = "echo"

    async def complete(self, request: Request) -> Completion:
        await asyncio.sleep(0)
        return Completion(text="re: " + request.messages[-1].text)


@pytest.fixture
def srv() -> Iterator[FakeChatServer]:
    def reply(body: dict[str, Any]) -> str:
        return "Action: tap(" + body["messages"][-1]["content"] + ")"

    with FakeChatServer(reply) as server:
        yield server


def test_record_then_replay_round_trip(srv: FakeChatServer, tmp_path: Path) -> None:
    pytest.importorskip("openai")
    path = tmp_path / "runs" / "replies.jsonl"
    inner = make_provider("openai:m", base_url=srv.base_url, backoff_base_s=0.001)
    recorder = RecordingProvider(inner, path)
    srv.push_faults(None, Fault.content_filter())  # the second call of the run is refused
    episodes = [(f"s{i}", r) for i in range(3) for r in range(2)]

    async def episode(iid: str, repeat: int) -> list[Completion]:
        done = [await recorder.complete(req(iid, repeat, call)) for call in range(3)]
        recorder.flush(iid, repeat)
        return done

    async def go() -> list[list[Completion]]:
        try:
            return await asyncio.gather(*(episode(i, r) for i, r in episodes))
        finally:
            await recorder.aclose()

    live = asyncio.run(go())
    assert recorder.pending() == []
    assert recorder.name == "openai:m" and recorder.stats().calls == 18
    assert recorder.describe()["record_to"] == str(path)
    lines = path.read_bytes().splitlines()
    assert len(lines) == 6
    assert set(orjson.loads(lines[0])) <= {"instance_id", "repeat", "responses", "refusals"}

    replay = make_provider(f"replay:{path}")
    assert isinstance(replay, ReplayProvider) and len(replay) == 6

    async def replay_all() -> list[list[Completion]]:
        return [[await replay.complete(req(i, r, c)) for c in range(3)] for i, r in episodes]

    again = asyncio.run(replay_all())
    flat_live = [(c.text, c.refusal) for ep in live for c in ep]
    flat_again = [(c.text, c.refusal) for ep in again for c in ep]
    assert flat_again == flat_live
    assert sum(refused for _, refused in flat_again) == 1
    assert ("Action: tap(s1/1/2)", False) in flat_again
    assert replay.stats().calls == 18 and replay.stats().refusals == 1


def test_replay_missing_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"instance_id": "a", "repeat": 0, "responses": ["tap(1)"]}\n')
    replay = ReplayProvider(path)
    assert asyncio.run(replay.complete(req("a", 0, 0))).text == "tap(1)"
    missing = rf"{path}: no recorded responses for instance 'b' repeat 0"
    with pytest.raises(ReplayMissing, match=missing):
        asyncio.run(replay.complete(req("b", 0, 0)))
    past = r"instance 'a' repeat 0 has 1 recorded responses; call 1 is past them"
    with pytest.raises(ReplayMissing, match=past):
        asyncio.run(replay.complete(req("a", 0, 1)))
    with pytest.raises(ReplayMissing, match="repeat 3"):
        asyncio.run(replay.complete(req("a", 3, 0)))
    assert not issubclass(ReplayMissing, InfraError)


@pytest.mark.parametrize(
    ("line", "where"),
    [
        (b'{"instance_id": "a", "repeat": 0, "responses": ["x"', ":2: line: invalid JSON"),
        (b'["a", 0]', ":2: record: expected a JSON object"),
        (b'{"instance_id": 7, "repeat": 0, "responses": []}', ":2: instance_id:"),
        (b'{"instance_id": "a", "repeat": "0", "responses": []}', ":2: repeat:"),
        (b'{"instance_id": "a", "repeat": true, "responses": []}', ":2: repeat:"),
        (b'{"instance_id": "a", "repeat": 0, "responses": "x"}', ":2: responses:"),
        (b'{"instance_id": "a", "repeat": 0, "responses": ["x", 2]}', ":2: responses[1]:"),
        (b'{"instance_id": "a", "repeat": 0, "responses": ["x"], "refusals": []}', ":2: refusals:"),
    ],
)
def test_bad_lines_fail_at_load_with_file_line_field(
    tmp_path: Path, line: bytes, where: str
) -> None:
    path = tmp_path / "bad.jsonl"
    good = b'{"instance_id": "a", "repeat": 0, "responses": ["x"]}'
    path.write_bytes(good + b"\n" + line + b"\n" + good + b"\n")
    with pytest.raises(ReplayFormatError) as info:
        load_replay(path)
    assert str(info.value).startswith(str(path) + where)


def test_later_records_win_and_torn_tail_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(
        b'{"instance_id": "a", "repeat": 0, "responses": ["old"]}\n\n'
        b'{"instance_id": "a", "repeat": 0, "responses": ["new"], "extra": 1}\n'
        b'{"instance_id": "b", "repeat": 0, "respo'  # a crash mid-write
    )
    with caplog.at_level(logging.WARNING):
        episodes = load_replay(path)
    assert episodes == {("a", 0): (("new",), (False,), ((),))}
    assert "torn last line" in caplog.text
    with pytest.raises(FileNotFoundError, match="replay file"):
        load_replay(tmp_path / "absent.jsonl")
    with pytest.raises(TypeError, match="no options"):
        make_provider(f"replay:{path}", concurrency=2)


def test_recorder_discards_repairs_and_appends(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_bytes(b'{"instance_id": "old", "repeat": 0, "responses": []}\n{"torn')
    recorder = RecordingProvider(Echo(), path)  # cuts the torn tail so appends stay parseable

    async def go() -> None:
        for call in (0, 1):
            await recorder.complete(req("kept", 0, call))
        await recorder.complete(req("failed", 0, 0))
        for call in (0, 2):  # call 1 never happened: only the prefix can be replayed
            await recorder.complete(req("gap", 1, call))

    asyncio.run(go())
    recorder.discard("failed", 0)
    recorder.flush("kept", 0)
    with caplog.at_level(logging.WARNING):
        recorder.flush("gap", 1)
    assert "do not follow 0..n-1" in caplog.text
    recorder.flush("never-called", 4)
    assert load_replay(path) == {
        ("old", 0): ((), (), ()),
        ("kept", 0): (("re: kept/0/0", "re: kept/0/1"), (False, False), ((), ())),
        ("gap", 1): (("re: gap/1/0",), (False,), ((),)),
        ("never-called", 4): ((), (), ()),
    }


def test_concurrent_flushes_from_threads_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "threads.jsonl"
    recorder = RecordingProvider(Echo(), path)
    big = "x" * 20_000  # long lines make torn or interleaved writes visible

    def worker(t: int) -> None:
        for r in range(10):
            asyncio.run(recorder.complete(req(f"t{t}", r, 0, text=big)))
            recorder.flush(f"t{t}", r)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    episodes = load_replay(path)
    assert len(episodes) == 60
    assert all(resp == ("re: " + big,) for resp, _, _ in episodes.values())
