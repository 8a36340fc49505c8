"""Running totals of a provider; its own module so ``_base`` can name it without cycles."""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["ProviderStats"]


@dataclass(frozen=True)
class ProviderStats:
    """Running totals of one provider, cheap to read for a progress bar.

    ``calls`` counts finished ``complete`` calls (``errors`` of them raised InfraError);
    ``retries`` counts extra attempts; ``latency_s`` sums the successful attempts' latencies.
    """

    calls: int = 0
    errors: int = 0
    retries: int = 0
    refusals: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    in_flight: int = 0

    def __add__(self, other: ProviderStats) -> ProviderStats:
        """Totals over several providers (agent + judge, say)."""
        return ProviderStats(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    @property
    def mean_latency_s(self) -> float:
        ok = self.calls - self.errors
        return self.latency_s / ok if ok else 0.0
