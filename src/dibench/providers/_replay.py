"""Recorded replies: ``replay:FILE.jsonl`` serves them, ``RecordingProvider`` writes them.

Any run can be re-scored without the model: record once, then replay with another parser,
metric or report. One JSONL record per episode::

    {"instance_id": "shop-0001-a3", "repeat": 2, "responses": ["...", "..."]}

``responses[k]`` answers the episode's call ``k`` (``Request.call``). An optional
``"refusals": [bool, ...]`` of the same length keeps vendor refusal flags, and an optional
``"calls": [[call, ...], ...]`` of the same length a tool-protocol reply's tool calls
(``ToolCall.as_json``; ``[]`` for a reply without), so a recorded run replays the structured
reply byte for byte. A later record for
the same (instance_id, repeat) supersedes an earlier one, so a resumed run may append.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from pathlib import Path
from typing import Any

import orjson

from dibench._errors import DIBenchError
from dibench._fs import FileError, NoSuchFile

from ._base import PROVIDERS, Completion, Provider, Request, ToolCall
from ._stats import ProviderStats

__all__ = [
    "Recorded",
    "RecordingProvider",
    "ReplayFormatError",
    "ReplayMissing",
    "ReplayProvider",
    "load_replay",
]

log = logging.getLogger("dibench.providers")

Calls = tuple[ToolCall, ...]
Episode = tuple[tuple[str, ...], tuple[bool, ...], tuple[Calls, ...]]
# one call as recorded: (text, refusal) or (text, refusal, tool calls)
Recorded = tuple[str, bool] | tuple[str, bool, Calls]


class ReplayMissing(DIBenchError, LookupError):
    """The replay file has no answer for this call: the run does not match the recording.

    A usage error, deliberately not an InfraError: retrying on resume cannot fix it.
    """


class ReplayFormatError(DIBenchError, ValueError):
    """A line of a replay file is not a valid record; the message is ``file:line: field: why``."""


def _check_record(obj: object, where: str) -> tuple[tuple[str, int], Episode]:
    if not isinstance(obj, dict):
        raise ReplayFormatError(f"{where}: record: expected a JSON object")
    iid = obj.get("instance_id")
    if not isinstance(iid, str):
        raise ReplayFormatError(f"{where}: instance_id: expected a string, got {iid!r}")
    repeat = obj.get("repeat")
    if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 0:
        raise ReplayFormatError(f"{where}: repeat: expected an integer >= 0, got {repeat!r}")
    responses = obj.get("responses")
    if not isinstance(responses, list):
        raise ReplayFormatError(f"{where}: responses: expected a list of strings")
    for i, text in enumerate(responses):
        if not isinstance(text, str):
            raise ReplayFormatError(f"{where}: responses[{i}]: expected a string, got {text!r}")
    refusals = obj.get("refusals", [False] * len(responses))
    if (
        not isinstance(refusals, list)
        or len(refusals) != len(responses)
        or not all(isinstance(r, bool) for r in refusals)
    ):
        raise ReplayFormatError(f"{where}: refusals: expected {len(responses)} booleans")
    raw_calls = obj.get("calls", [[]] * len(responses))
    if not isinstance(raw_calls, list) or len(raw_calls) != len(responses):
        raise ReplayFormatError(f"{where}: calls: expected {len(responses)} lists of tool calls")
    calls: list[Calls] = []
    for i, listed in enumerate(raw_calls):
        if not isinstance(listed, list):
            raise ReplayFormatError(f"{where}: calls[{i}]: expected a list of tool calls")
        try:
            calls.append(tuple(ToolCall.from_json(c) for c in listed if isinstance(c, dict)))
        except ValueError as exc:
            raise ReplayFormatError(f"{where}: calls[{i}]: {exc}") from None
        if len(calls[-1]) != len(listed):
            raise ReplayFormatError(f"{where}: calls[{i}]: expected JSON objects")
    return (iid, repeat), (tuple(responses), tuple(refusals), tuple(calls))


def load_replay(path: str | Path) -> dict[tuple[str, int], Episode]:
    """Read a replay file into {(instance_id, repeat): (responses, refusals, calls)}.

    A torn last line (no newline at end of file: the recorder died mid-write) is skipped with
    a warning; any other bad line raises ReplayFormatError naming file, line and field.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise NoSuchFile(f"replay file {path}: {exc.strerror or exc}") from exc
    lines = data.split(b"\n")
    torn = lines[-1] != b""  # content after the last newline
    episodes: dict[tuple[str, int], Episode] = {}
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            if torn and lineno == len(lines):
                log.warning("%s: skipping a torn last line (an interrupted write)", where)
                break
            raise ReplayFormatError(f"{where}: line: invalid JSON ({exc})") from None
        key, episode = _check_record(obj, where)
        episodes[key] = episode
    return episodes


class ReplayProvider(Provider):
    """Serves recorded responses for (instance_id, repeat) in call order."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.name = f"replay:{path}"
        self._episodes = load_replay(self.path)
        self._lock = threading.Lock()
        self._calls = 0
        self._refusals = 0

    async def complete(self, request: Request) -> Completion:
        key = (request.instance_id, request.repeat)
        episode = self._episodes.get(key)
        if episode is None:
            raise ReplayMissing(
                f"{self.path}: no recorded responses for instance {request.instance_id!r} "
                f"repeat {request.repeat}"
            )
        responses, refusals, calls = episode
        if not 0 <= request.call < len(responses):
            raise ReplayMissing(
                f"{self.path}: instance {request.instance_id!r} repeat {request.repeat} has "
                f"{len(responses)} recorded responses; call {request.call} is past them"
            )
        refusal = refusals[request.call]
        with self._lock:
            self._calls += 1
            self._refusals += int(refusal)
        return Completion(
            text=responses[request.call],
            refusal=refusal,
            model="replay",
            calls=calls[request.call],
        )

    def __len__(self) -> int:
        """Number of recorded episodes."""
        return len(self._episodes)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "episodes": len(self._episodes)}

    def stats(self) -> ProviderStats:
        with self._lock:
            return ProviderStats(calls=self._calls, refusals=self._refusals)


@PROVIDERS.register("replay")
def replay_provider(path: str, **options: Any) -> ReplayProvider:
    """``replay:FILE.jsonl``: recorded replies (a run's ``replies/``), offline and exact."""
    if options:
        raise TypeError(f"replay takes no options, got {sorted(options)}")
    if not path:
        raise ValueError("replay needs a file: 'replay:PATH.jsonl'")
    return ReplayProvider(path)


class RecordingProvider(Provider):
    """Wraps any provider and appends its replies to a replay file, one record per episode.

    Replies are held in memory until the runner calls ``flush(instance_id, repeat)`` at the end
    of the episode (or ``discard`` for an episode that failed). Each flush appends one line
    with a single ``write`` on an ``O_APPEND`` descriptor and fsyncs it, under a lock, so
    concurrent episodes (tasks or threads) never interleave and a crash loses at most the
    line being written.
    """

    def __init__(self, inner: Provider, path: str | Path, *, fsync: bool = False) -> None:
        # Each record is one O_APPEND write, so a killed process never leaves half a record
        # behind the ones before it; fsync (off by default: it costs milliseconds per episode
        # and the store keeps every reply anyway) also survives a power cut.
        self.fsync = fsync
        self.inner = inner
        self.path = Path(path)
        self.name = inner.name
        self._pending: dict[tuple[str, int], dict[int, Recorded]] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._drop_torn_tail()

    def _drop_torn_tail(self) -> None:
        """Cut a half-written last line left by a crash, so our appends start on a new line."""
        try:
            with self.path.open("rb+") as f:
                data = f.read()
                if data and not data.endswith(b"\n"):
                    keep = data.rfind(b"\n") + 1
                    log.warning(
                        "%s: dropping a torn last line of %d bytes", self.path, len(data) - keep
                    )
                    f.truncate(keep)
        except FileNotFoundError:
            pass

    async def complete(self, request: Request) -> Completion:
        completion = await self.inner.complete(request)
        with self._lock:
            episode = self._pending.setdefault((request.instance_id, request.repeat), {})
            episode[request.call] = (completion.text, completion.refusal, completion.calls)
        return completion

    def add(self, instance_id: str, repeat: int, calls: dict[int, Recorded]) -> None:
        """Hold an episode's replies made elsewhere (a Ray worker), call index -> (text,
        refusal[, tool calls]), to be written by ``flush`` or dropped by ``discard`` like this
        provider's own."""
        with self._lock:
            self._pending[(instance_id, repeat)] = dict(calls)

    def flush(self, instance_id: str, repeat: int) -> None:
        """Append the episode's record and forget it; called by the runner when it ends."""
        with self._lock:
            episode = self._pending.pop((instance_id, repeat), {})
        responses: list[str] = []
        refusals: list[bool] = []
        tool_calls: list[list[dict[str, Any]]] = []
        while len(responses) in episode:
            text, refusal, *rest = episode[len(responses)]
            responses.append(text)
            refusals.append(refusal)
            tool_calls.append([c.as_json() for c in (rest[0] if rest else ())])
        if len(responses) != len(episode):
            log.warning(
                "%s: instance %r repeat %d: calls %s do not follow 0..n-1; recorded the first %d",
                self.path, instance_id, repeat, sorted(episode), len(responses),
            )  # fmt: skip
        record: dict[str, Any] = {
            "instance_id": instance_id,
            "repeat": repeat,
            "responses": responses,
        }
        if any(refusals):
            record["refusals"] = refusals
        if any(tool_calls):
            record["calls"] = tool_calls
        line = orjson.dumps(record) + b"\n"
        with self._write_lock:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            except OSError as exc:  # a read-only or full run directory
                raise FileError.of(exc, self.path) from None
            start = os.fstat(fd).st_size
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view) :]
                if self.fsync:
                    os.fsync(fd)
            except OSError as exc:
                # A full disk wrote part of the line: cut it, so the next record the resumed
                # run appends does not follow a torn one (the episode is re-run anyway).
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, start)
                raise FileError.of(exc, self.path) from None
            finally:
                os.close(fd)

    def discard(self, instance_id: str, repeat: int) -> None:
        """Forget an episode's replies without writing them (it failed and will be rerun)."""
        with self._lock:
            self._pending.pop((instance_id, repeat), None)

    def pending(self) -> list[tuple[str, int]]:
        """Episodes with replies not yet flushed."""
        with self._lock:
            return list(self._pending)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "record_to": str(self.path)}

    def stats(self) -> ProviderStats:
        return self.inner.stats()
