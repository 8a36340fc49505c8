"""What a condition runs with, and where: its built parts and the ``Backend`` that runs them.

``execute`` (``_api``) builds a request's adapter, provider and defense chain (``components``),
wraps the provider to record replies (``recording``) and hands them, as ``RunParts``, to a
``Backend`` (``_workload``): ``LocalBackend`` runs the condition's workload in this process,
``RayBackend`` (``_ray``) on a pool of Ray actors, both through ``run_workload``. Either way
this process stays the run directory's only writer, and a run may resume under the other
backend.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dibench._values import InstanceId
from dibench.adapters import Adapter
from dibench.providers import Provider

from ._errors import RunError
from ._request import stored_options
from ._run import ProgressFn
from ._rundir import judge_replies_path
from ._store import ResultStore
from ._types import AgentRequest, Recorder

if TYPE_CHECKING:
    from dibench.defenses import DefenseChain
    from dibench.providers import RecordingProvider

__all__ = [
    "ENDPOINTS_META",
    "Recorders",
    "RunParts",
    "components",
    "fatal_errors",
    "load_defenses",
    "record_endpoint_stats",
    "recording",
]

ENDPOINTS_META = "endpoints|"  # + condition key: per-endpoint totals of a multi-endpoint run
_SUMMED = ("calls", "errors", "ejections", "latency_s")


def record_endpoint_stats(store: ResultStore, condition: str, provider: object) -> None:
    """Add the provider's per-endpoint totals (several ``base_url``s; anything with an
    ``endpoint_stats()``) to the store's, so a resumed run's facts count every session; one
    endpoint records nothing."""
    stats = getattr(provider, "endpoint_stats", None)
    new = stats() if callable(stats) else []
    if not new or not any(e["calls"] for e in new):
        return
    key = ENDPOINTS_META + condition
    old = {e["url"]: e for e in store.meta(key) or [] if isinstance(e, dict) and "url" in e}
    merged = []
    for entry in new:
        total = dict(entry)
        prev = old.pop(entry["url"], None) or {}
        for k in _SUMMED:
            total[k] = entry[k] + (prev.get(k) or 0)
        ok = total["calls"] - total["errors"]
        total["mean_latency_s"] = round(total["latency_s"] / ok, 6) if ok else 0.0
        merged.append(total)
    merged += old.values()  # an endpoint of an earlier session, not given this time
    store.set_meta(key, merged)


def fatal_errors() -> tuple[type[BaseException], ...]:
    """Errors that stop a run (no replay record, no OCR engine, a missing SDK): calls in
    flight finish and are stored, nothing else starts."""
    from dibench.ocr import OcrUnavailable
    from dibench.providers import MissingSDKError, ReplayMissing

    return (ReplayMissing, OcrUnavailable, MissingSDKError)


class Recorders:
    """The agent's recorder and every judge's, flushed or discarded together per episode."""

    def __init__(self, recorders: Sequence[RecordingProvider]) -> None:
        self.recorders = list(recorders)

    def flush(self, instance_id: InstanceId, repeat: int) -> None:
        for r in self.recorders:
            r.flush(instance_id, repeat)

    def discard(self, instance_id: InstanceId, repeat: int) -> None:
        for r in self.recorders:
            r.discard(instance_id, repeat)


def components(req: AgentRequest) -> tuple[Adapter, Provider, DefenseChain]:
    """The adapter, provider and defense chain of ``req``; a bad option names its flag."""
    from dibench._registry import check_options
    from dibench.adapters import ADAPTERS
    from dibench.defenses import DefenseSpecs
    from dibench.providers import PROVIDERS

    stored_options(req.provider_options)
    stored_options(req.adapter_options, "--adapter-opt")
    scheme, _, rest = req.model.partition(":")
    adapter_factory, provider_factory = ADAPTERS.get(req.framework), PROVIDERS.require(scheme)
    try:
        check_options(adapter_factory, req.adapter_options, f"adapter {req.framework!r}")
        adapter = adapter_factory(**req.adapter_options)
    except (TypeError, ValueError) as exc:
        raise RunError(f"--adapter-opt: {req.framework}: {_plain(exc)}") from None
    try:
        check_options(provider_factory, req.provider_options, f"provider {scheme!r}", positional=1)
        provider = provider_factory(rest, **req.provider_options)
    except (TypeError, ValueError) as exc:
        raise RunError(f"--provider-opt: {req.model}: {_plain(exc)}") from None
    return adapter, provider, DefenseSpecs.of(req.defenses).chain()


def load_defenses(chain: DefenseChain) -> None:
    """Load what each defense of ``chain`` would load on its first screen (a model from disk),
    so one that cannot is refused, naming ``--defense``, before anything is written."""
    from dibench.defenses import DefenseError

    for defense in chain:
        try:
            defense.load()
        except DefenseError as exc:
            raise RunError(f"--defense: {exc}") from None


def _plain(exc: Exception) -> str:
    """A constructor's complaint without its Python qualifications."""
    return re.sub(r"^[\w.]*__init__\(\) |^\w+\(\) ", "", str(exc))


def recording(
    req: AgentRequest, provider: Provider, chain: DefenseChain
) -> tuple[Provider, Recorders | None]:
    """The agent's provider wrapped to record its replies, and every model-based detector's
    (recorded beside the agent's); with recording off, ``provider`` and None."""
    from dibench.providers import RecordingProvider, ReplayProvider

    if not req.record:
        return provider, None
    path = req.condition.replies(req.out)
    path.parent.mkdir(exist_ok=True)
    recorders: list[RecordingProvider] = []
    if not req.model.startswith("replay:"):
        provider = RecordingProvider(provider, path)
        recorders.append(provider)
    judges: list[Provider] = []

    def record(judge: Provider) -> Provider:
        judges.append(judge)
        if isinstance(judge, ReplayProvider):
            return judge
        rec = RecordingProvider(judge, judge_replies_path(path, len(judges) - 1))
        recorders.append(rec)
        return rec

    for defense in chain:
        defense.record_providers(record)
    return provider, (Recorders(recorders) if recorders else None)


@dataclass(frozen=True)
class RunParts:
    """What ``execute`` hands a backend: the condition's adapter, its provider (wrapped to
    record replies), its defense chain, the recorders to flush, the errors that stop the run
    and the progress callback."""

    adapter: Adapter
    provider: Provider
    chain: DefenseChain | None
    recorder: Recorder | None = None  # execute's: a ``Recorders``
    fatal: tuple[type[BaseException], ...] = ()
    on_progress: ProgressFn | None = None
