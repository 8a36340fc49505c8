"""``DefendedAdapter``: any framework adapter behind a chain of defenses.

Works at the ``Adapter.decide`` boundary so every framework is defended the same way: the
chain's ``before`` hooks build what the model sees, the inner adapter runs on it, its action is
mapped back to phone pixels and re-resolved on the phone's candidate boxes, and the ``after``
hooks see the result.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dibench.adapters._base import Adapter, AgentInput, Decision, candidate_at
from dibench.adapters._common import OUTSIDE
from dibench.metrics._rows import Outcome
from dibench.providers._base import Provider

from ._base import DefenseChain, DefenseContext, View

__all__ = ["DefendedAdapter", "map_back"]

_POINT_ACTIONS = ("tap", "long_press")


def map_back(decision: Decision, view: View, inp: AgentInput) -> Decision:
    """The decision with its action in phone pixels and its candidate read from phone boxes.

    A tap the inner adapter resolved on shown (e.g. downscaled) boxes is re-resolved on the
    original ones, so the candidate is the one under the finger on the real phone.
    """
    action = decision.action
    if view.identity or action is None or action.x is None or action.y is None:
        return decision
    x, y = view.to_phone(action.x, action.y)
    phone_action = dataclasses.replace(action, x=x, y=y)
    out = dataclasses.replace(decision, action=phone_action)
    resolvable = decision.outcome == Outcome.COMMITTED or (
        decision.outcome == Outcome.NO_COMMIT and decision.cause == OUTSIDE
    )
    if action.kind in _POINT_ACTIONS and resolvable:
        cid = candidate_at(inp.candidate_boxes, x, y)
        if cid is None:
            return dataclasses.replace(
                out, candidate=None, outcome=Outcome.NO_COMMIT, cause=OUTSIDE
            )
        return dataclasses.replace(out, candidate=cid, outcome=Outcome.COMMITTED, cause="")
    return out


class DefendedAdapter(Adapter):
    """Runs ``inner`` on what the defenses let the model see; see the module docstring."""

    def __init__(self, inner: Adapter, chain: DefenseChain) -> None:
        self.inner = inner
        self.chain = chain
        self.name = inner.name
        self.max_steps = inner.max_steps

    def model_input(self, inp: AgentInput, view: View) -> AgentInput:
        """The AgentInput the inner adapter receives for ``view``."""
        parts = [self.chain.system_prefix(inp.language), *view.warnings, inp.system_prefix]
        prefix = "\n\n".join(p.strip() for p in parts if p and p.strip())
        return dataclasses.replace(
            inp,
            screenshot=view.image,
            screenshot_png=view.png,
            ui=view.ui,
            candidate_boxes=dict(view.candidate_boxes),
            system_prefix=prefix,
        )

    async def decide(self, inp: AgentInput, provider: Provider) -> Decision:
        ctx = DefenseContext(inp)
        view = View.of(inp)
        for defense in self.chain:
            view = await defense.before(view, ctx)
            if view.blocked is not None:
                return Decision(
                    candidate=None,
                    outcome=Outcome.BLOCKED,
                    cause=f"blocked by {defense.spec}: {view.blocked}",
                    steps=tuple(ctx.steps),
                    verdicts=tuple(ctx.verdicts),
                )
        before_steps = len(ctx.steps)
        decision = await self.inner.decide(self.model_input(inp, view), provider)
        decision = map_back(decision, view, inp)
        for defense in self.chain:
            decision = await defense.after(view, decision, ctx)
        steps = (*ctx.steps[:before_steps], *decision.steps, *ctx.steps[before_steps:])
        return dataclasses.replace(
            decision, steps=steps, verdicts=(*ctx.verdicts, *decision.verdicts)
        )

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "defenses": self.chain.describe()}

    async def aclose(self) -> None:
        await self.chain.aclose()
