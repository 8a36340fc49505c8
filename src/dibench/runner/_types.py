"""The runner's seams as types: what a request, a recorder and a condition's settings must offer.

Protocols rather than base classes: a ``RunRequest``, a ``SimRequest`` and an imported inspect
log's condition are unrelated dataclasses that each carry these attributes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from dibench._values import Condition, InstanceId

__all__ = ["AgentRequest", "ConditionSpec", "Described", "Recorder"]


class Described(Protocol):
    """A run's settings (``RunConfig``, ``SimRunConfig``) as run.json and the store record them."""

    def describe(self) -> dict[str, Any]: ...


class ConditionSpec(Protocol):
    """What a condition's entry in run.json is written from, and its label and key."""

    @property
    def framework(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def defense(self) -> str: ...
    @property
    def defenses(self) -> tuple[str, ...]: ...
    @property
    def config(self) -> Described: ...
    @property
    def provider_options(self) -> dict[str, Any]: ...
    @property
    def adapter_options(self) -> dict[str, Any]: ...
    @property
    def condition(self) -> Condition:
        """Its label, key and replay file: the framework as stored (``name[robust]``)."""
        ...


class AgentRequest(ConditionSpec, Protocol):
    """A condition to run: its settings, the run directory and whether replies are recorded
    (a ``RunRequest`` or a ``SimRequest``)."""

    @property
    def out(self) -> Path: ...
    @property
    def record(self) -> bool: ...


class Recorder(Protocol):
    """Receives the end of each run: its replies written (``flush``) or dropped (``discard``)."""

    def flush(self, instance_id: InstanceId, repeat: int) -> None: ...
    def discard(self, instance_id: InstanceId, repeat: int) -> None: ...
