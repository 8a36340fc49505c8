"""``DefendedAdapter``: any framework adapter behind a chain of defenses.

Works at the ``Adapter.decide`` boundary so every framework is defended the same way: the
chain's ``before`` hooks build what the model sees, the inner adapter runs on it, its action is
mapped back to phone pixels and re-resolved on the phone's candidate boxes, and the ``after``
hooks see the result.

Interactive episodes (``run_episode`` over a simulator) get the same treatment at every step
through ``DefendedEnv``: its ``observe`` runs the ``before`` hooks on each new screen (the
framework's episode awaits it before the model sees the screen), its ``step`` maps the action
back to phone pixels before the real app applies it, and the ``after`` hooks see the final
decision.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dibench._values import InstanceId, Outcome
from dibench.adapters import (
    OUTSIDE,
    Action,
    Adapter,
    AgentInput,
    Decision,
    Environment,
    Observed,
    Screen,
    StaticScreen,
    Transition,
    candidate_at,
)
from dibench.providers import Completion, Provider, Request

from ._base import DefenseChain, DefenseContext, View

__all__ = ["DefendedAdapter", "DefendedEnv", "map_back"]

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


class _Continued(Provider):
    """``inner`` with call indices (and seeds) continued after ``offset`` earlier calls.

    A second attempt (``reconsider``) is a new episode to the adapter, whose calls count from
    0 again; shifting them keeps replay files and recorded replies one sequence per run.
    """

    def __init__(self, inner: Provider, offset: int) -> None:
        self.inner, self.offset, self.name = inner, offset, inner.name

    async def complete(self, request: Request) -> Completion:
        shifted = dataclasses.replace(
            request, call=request.call + self.offset, seed=request.seed + self.offset
        )
        return await self.inner.complete(shifted)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()


class _Rewritten(Provider):
    """``inner`` behind the chain's ``rewrite`` hooks: every request the framework makes is
    rewritten before it is sent, and the completion says what was sent (the step records it)."""

    def __init__(self, inner: Provider, chain: DefenseChain) -> None:
        self.inner, self.chain, self.name = inner, chain, inner.name

    async def complete(self, request: Request) -> Completion:
        sent = self.chain.rewrite(request)
        completion = await self.inner.complete(sent)
        if sent.messages == request.messages:
            return completion
        return dataclasses.replace(completion, sent=sent.messages)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()


def _rewritten(provider: Provider, chain: DefenseChain) -> Provider:
    return _Rewritten(provider, chain) if chain.rewrites else provider


def _prefix(*parts: str) -> str:
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


class DefendedEnv(Environment):
    """``env`` as the model sees it through ``chain``: the defended view of every screen.

    ``observe`` runs the ``before`` hooks on each new screen (one verdict per screen per
    detector; a block ends the episode ⊥ at that step; warnings join the system prompt while
    the screen is shown) and returns the view's pixels, UI and boxes in shown coordinates;
    ``step`` maps an action taken in them back to phone pixels before ``env`` applies it. One
    ``DefenseContext`` lives for the whole episode; ``ctx.screen`` keys per-screen randomness.
    """

    def __init__(
        self,
        env: Environment,
        chain: DefenseChain,
        *,
        instance_id: InstanceId,
        repeat: int,
        seed: int,
        system_prefix: str = "",
    ) -> None:
        self.env = env
        self.chain = chain
        self.instance_id, self.repeat, self.seed = instance_id, repeat, seed
        self.instruction = env.instruction
        self.language = env.language
        self.context = tuple(env.context)
        self.acceptable = tuple(env.acceptable)
        self.interactive = env.interactive
        self.own_prefix = system_prefix
        self.ctx: DefenseContext | None = None
        self.view: View | None = None  # the view of the screen shown last
        self.blocked: str | None = None  # the cause once a before hook blocked a step
        self._sent: tuple[Action, Action] | None = None  # last (shown, phone) action

    def reset(self) -> Screen:
        self.view, self.blocked, self._sent = None, None, None
        return self.env.reset()

    @property
    def screen(self) -> Screen:
        return self.env.screen

    def to_phone(self, action: Action) -> Action:
        """``action`` (in the pixels of the view shown last) in phone pixels."""
        if self._sent is not None and self._sent[0] is action:
            return self._sent[1]
        view = self.view
        if view is None or view.identity or action.x is None or action.y is None:
            return action
        x, y = view.to_phone(action.x, action.y)
        return dataclasses.replace(action, x=x, y=y)

    def step(self, action: Action) -> Transition:
        phone = self.to_phone(action)
        self._sent = (action, phone)
        return self.env.step(phone)

    def _input(self, screen: Screen) -> AgentInput:
        return AgentInput(
            instance_id=self.instance_id,
            repeat=self.repeat,
            seed=self.seed,
            instruction=self.instruction,
            context=self.context,
            language=self.language,
            screenshot=screen.image,
            ui=screen.ui,
            candidate_boxes=dict(screen.candidate_boxes),
            acceptable=self.acceptable,
            system_prefix=self.own_prefix,
            screenshot_png=screen.png,
        )

    async def observe(self, screen: Screen) -> Observed:
        raw = await self.env.observe(screen)  # a wrapped environment may have its own view
        if raw.blocked is not None:
            return raw
        screen = raw.screen
        inp = self._input(screen)
        if self.ctx is None:
            self.ctx = DefenseContext(inp, screen=screen.id)
        ctx = self.ctx
        ctx.inp, ctx.screen = inp, screen.id
        n_verdicts, n_steps = len(ctx.verdicts), len(ctx.steps)
        view = View.of(inp)
        blocked = None
        for defense in self.chain:
            view = await defense.before(view, ctx)
            if view.blocked is not None:
                blocked = self.blocked = f"blocked by {defense.spec}: {view.blocked}"
                break
        steps = (*raw.steps, *ctx.steps[n_steps:])
        verdicts = (*raw.verdicts, *ctx.verdicts[n_verdicts:])
        if blocked is not None:
            return Observed(screen, steps=steps, verdicts=verdicts, blocked=blocked)
        self.view = view
        shown = screen
        unchanged = view.image is screen.image and view.ui is screen.ui
        if not (unchanged and view.candidate_boxes == screen.candidate_boxes):
            shown = dataclasses.replace(
                screen,
                image=view.image,
                png=view.png,
                ui=view.ui,
                candidate_boxes=dict(view.candidate_boxes),
            )
        base = raw.system_prefix if raw.system_prefix is not None else self.own_prefix
        prefix = _prefix(self.chain.system_prefix(self.language), *view.warnings, base)
        return Observed(shown, system_prefix=prefix, steps=steps, verdicts=verdicts)


class DefendedAdapter(Adapter):
    """Runs ``inner`` on what the defenses let the model see; see the module docstring."""

    def __init__(self, inner: Adapter, chain: DefenseChain) -> None:
        self.inner = inner
        self.chain = chain
        self.name = inner.name
        self.max_steps = inner.max_steps

    def model_input(self, inp: AgentInput, view: View) -> AgentInput:
        """The AgentInput the inner adapter receives for ``view``."""
        prefix = _prefix(self.chain.system_prefix(inp.language), *view.warnings, inp.system_prefix)
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
        ctx.memo["agent_provider"] = provider  # a defense may ask the agent's model a follow-up
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
        agent = _rewritten(provider, self.chain)
        decision = await self.inner.decide(self.model_input(inp, view), agent)
        decision = map_back(decision, view, inp)
        for defense in self.chain:
            decision = await defense.after(view, decision, ctx)
        steps = (*ctx.steps[:before_steps], *decision.steps, *ctx.steps[before_steps:])
        if ctx.reconsider_notes and not ctx.reconsidered:
            # An after hook asked the agent to decide again: one more call with its note.
            ctx.reconsidered = True
            again = view
            for note in ctx.reconsider_notes:
                again = again.warn(note)
            n_steps = len(ctx.steps)
            continued = _Continued(agent, len(decision.steps))
            second = await self.inner.decide(self.model_input(inp, again), continued)
            second = map_back(second, again, inp)
            for defense in self.chain:
                second = await defense.after(again, second, ctx)
            steps = (*steps, *second.steps, *ctx.steps[n_steps:])
            return dataclasses.replace(
                second, steps=steps,
                verdicts=(*ctx.verdicts, *decision.verdicts, *second.verdicts),
            )  # fmt: skip
        return dataclasses.replace(
            decision, steps=steps, verdicts=(*ctx.verdicts, *decision.verdicts)
        )

    async def run_episode(
        self,
        env: Environment,
        provider: Provider,
        *,
        instance_id: InstanceId,
        repeat: int,
        seed: int,
        system_prefix: str = "",
        max_steps: int | None = None,
    ) -> Decision:
        """The inner adapter's episode over ``DefendedEnv(env)``, then the ``after`` hooks.

        A single decision screen without a step limit goes through ``decide`` exactly as
        before. The final action is reported in phone pixels (steps keep what the model said
        in the pixels it was shown, as in ``decide``).
        """
        if isinstance(env, StaticScreen) and max_steps is None:
            return await super().run_episode(
                env, provider, instance_id=instance_id, repeat=repeat, seed=seed,
                system_prefix=system_prefix,
            )  # fmt: skip
        decision, ctx, own_steps = await self._checked(
            env, provider, instance_id, repeat, seed, system_prefix, max_steps, retry=False
        )
        if ctx is None or not ctx.reconsider_notes or ctx.reconsidered:
            return decision
        # Ask again: the episode is replayed from its start with the notes in the prompt; the
        # hooks then check the second proposal (and block rather than ask again).
        ctx.reconsidered = True
        notes = _prefix(*ctx.reconsider_notes, system_prefix)
        continued = _Continued(provider, own_steps)
        second, _, _ = await self._checked(
            env, continued, instance_id, repeat, seed, notes, max_steps, retry=True
        )
        return dataclasses.replace(
            second,
            steps=(*decision.steps, *second.steps),
            verdicts=(*decision.verdicts, *second.verdicts),
        )

    async def _checked(
        self,
        env: Environment,
        provider: Provider,
        instance_id: InstanceId,
        repeat: int,
        seed: int,
        system_prefix: str,
        max_steps: int | None,
        *,
        retry: bool,
    ) -> tuple[Decision, Any, int]:
        """One defended episode and its ``after`` hooks (told, on a ``retry``, that it is one).

        Returns the decision with the hooks' steps and verdicts appended, the episode's
        DefenseContext (None when it was blocked before the model saw a screen) and how many
        steps the agent itself made (where a retry continues the call numbering).
        """
        denv = DefendedEnv(
            env, self.chain, instance_id=instance_id, repeat=repeat, seed=seed,
            system_prefix=system_prefix,
        )  # fmt: skip
        decision = await self.inner.run_episode(
            denv, _rewritten(provider, self.chain), instance_id=instance_id, repeat=repeat,
            seed=seed,
            system_prefix=system_prefix, max_steps=max_steps,
        )  # fmt: skip
        if decision.action is not None:
            decision = dataclasses.replace(decision, action=denv.to_phone(decision.action))
        ctx, view = denv.ctx, denv.view
        if denv.blocked is not None or ctx is None or view is None:
            return decision, None, len(decision.steps)  # no action reached the hooks
        ctx.memo["agent_provider"] = provider  # a defense may ask the agent's model a follow-up
        if retry:
            ctx.reconsidered = True
        n_verdicts, n_steps = len(ctx.verdicts), len(ctx.steps)
        for defense in self.chain:
            decision = await defense.after(view, decision, ctx)
        merged = dataclasses.replace(
            decision,
            steps=(*decision.steps, *ctx.steps[n_steps:]),
            verdicts=(*decision.verdicts, *ctx.verdicts[n_verdicts:]),
        )
        return merged, ctx, len(decision.steps)

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "defenses": self.chain.describe()}

    async def aclose(self) -> None:
        await self.chain.aclose()
