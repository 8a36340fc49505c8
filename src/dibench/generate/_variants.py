"""Injected variants: pure functions of (benign state, target, probe, seed).

Datasets, imports (byos, hf), simulators and the adaptive attack all derive a variant here, so
one (state, target, probe) gets the same payload and seed wherever it is made.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from dibench._seeding import derive_seed
from dibench._values import InstanceId, Refusal
from dibench.dataset import DecisionState, InjectedRecord

if TYPE_CHECKING:
    from dibench.probes import Probe

__all__ = ["injected_id", "injected_record", "injected_records", "variant_seed"]


def injected_id(benign_id: str, target: str, probe: str) -> InstanceId:
    """The id of one injected variant (written ``<benign>.<target>.<probe>``)."""
    return InstanceId(benign_id, target, probe)


def injected_records(
    state: DecisionState,
    probe_names: Sequence[str],
    seed: int,
    epsilon: float | None = None,
    refused: dict[str, Refusal] | None = None,
) -> Iterator[InjectedRecord]:
    """Every (target, probe) variant of a benign state, targets in screen order; a variant
    whose title box is too small for the probe's shortest form, or whose target admits no
    false claim (``PayloadTooLong``), is none, its ``Refusal`` kept in ``refused`` (id ->
    refusal) when given, so a caller can say so."""
    from dibench.probes import PayloadTooLong, configured_probe

    probes = [configured_probe(p, epsilon=epsilon) for p in probe_names]
    for target in state.targets():
        for probe in probes:
            try:
                rec = injected_record(state, target, probe, seed)
            except PayloadTooLong as exc:
                if refused is not None:
                    refused[str(injected_id(state.id, target, probe.name))] = exc.refusal
                continue
            yield rec


def variant_seed(seed: int, benign_id: str, target: str | None, probe: str | None) -> int:
    """The seed of one injected variant's payload and composition (datasets and simulators)."""
    return derive_seed(seed, "inject", benign_id, target, probe)


def injected_record(state: DecisionState, target: str, probe: Probe, seed: int) -> InjectedRecord:
    """One variant: the probe's payload for ``target``, seeded by (seed, state, target, probe)."""
    inj_seed = variant_seed(seed, state.id, target, probe.name)
    return InjectedRecord(
        id=injected_id(state.id, target, probe.name),
        pair_of=state.id,
        app=state.app,
        category=state.category,
        language=state.language,
        probe=probe.name,
        target=target,
        carriers=probe.carriers,
        seed=inj_seed,
        instruction=state.instruction,
        context=state.context,
        candidates=state.candidates,
        acceptable=state.acceptable,
        payload=probe.payload(state, target, inj_seed),
        position=state.positions()[target],
    )
