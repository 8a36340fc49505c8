"""One episode of a framework's loop: requests, steps, actions on the environment, the result.

An adapter's ``run`` drives one episode over an ``Environment`` (a static decision screen or an
interactive simulated app). ``Episode.ask`` sends one Request (seeded ``seed + call``, carrying
the Observation of the current screen and the role's ``answer`` renderer), ``Episode.record``
turns the call into a ``Step``, ``await Episode.act`` applies an action to the environment (a
commit or the end of the episode raises ``End``) and awaits how the agent is shown the new
screen (``Environment.observe``: defenses may transform it, add to the system prompt or block
the step), and raising ``End`` finishes the episode with a ``Decision``.
"""

from __future__ import annotations

import dataclasses
import json
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, NoReturn

from dibench._errors import DIBenchError
from dibench._values import Box, Outcome
from dibench.providers import (
    Completion,
    ImagePart,
    Message,
    Observation,
    Part,
    Provider,
    Request,
    TextPart,
    ToolCall,
    ToolSpec,
)

from ._adapter import Adapter
from ._base import Action, AgentInput, Decision, Step, Verdict, candidate_at
from ._env import OUTSIDE, Environment, Screen, StaticScreen, Transition
from ._images import Shown, scale_box, scale_ui
from ._moves import AnswerFn
from ._parse import excerpt
from ._prompts import PromptTemplates
from ._replies import PARSE_MODES, FrameworkError, ReplyError

__all__ = [
    "ASKED",
    "CONFIRM_ANSWERS",
    "DECLINED",
    "GAVE_UP",
    "OUT_OF_STEPS",
    "REFUSED",
    "End",
    "Episode",
    "FrameworkAdapter",
    "Turn",
    "render_messages",
    "system_text",
    "tap_decision",
]


GAVE_UP = "gave up"
OUT_OF_STEPS = "ran out of steps"
REFUSED = "refusal"
ASKED = "asked the user"
DECLINED = "the user declined the confirmation"
CONFIRM_ANSWERS = ("accept", "decline")  # what the simulated user answers a confirmation


def system_text(prefix: str, body: str) -> str:
    """The framework's system prompt with a defense's prefix in front of it."""
    prefix = prefix.strip()
    return f"{prefix}\n\n{body}" if prefix else body


def render_messages(messages: Sequence[Message]) -> str:
    """The full text of a conversation, images replaced by ``<image WxH>`` markers."""
    out = []
    for m in messages:
        parts = [_rendered(p) for p in m.content]
        out.append(f"[{m.role}]\n" + "\n".join(parts))
    return "\n\n".join(out)


def _rendered(part: Part) -> str:
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, ImagePart):
        return f"<image {part.width}x{part.height}>"
    if isinstance(part, ToolCall):
        args = json.dumps(dict(part.input), ensure_ascii=False)
        return f"<tool_use {part.id} {part.name} {args}>"
    inner = "\n".join(_rendered(p) for p in part.content)
    error = " error" if part.is_error else ""
    return f"<tool_result {part.call_id}{error}>" + (f"\n{inner}" if inner else "")


class End(Exception):
    """Finishes an episode with this result."""

    def __init__(
        self,
        outcome: Outcome,
        cause: str = "",
        candidate: str | None = None,
        action: Action | None = None,
    ) -> None:
        super().__init__(cause or outcome.value)
        self.outcome = outcome
        self.cause = cause
        self.candidate = candidate
        self.action = action


def tap_decision(boxes: dict[str, Box], action: Action) -> End:
    """A tap in screenshot pixels -> commit to the candidate under it, or ⊥ outside all."""
    assert action.x is not None and action.y is not None
    cid = candidate_at(boxes, action.x, action.y)
    if cid is None:
        return End(Outcome.NO_COMMIT, OUTSIDE, None, action)
    return End(Outcome.COMMITTED, "", cid, action)


@dataclass
class Turn:
    """One call in flight: what was sent and what came back."""

    role: str
    messages: tuple[Message, ...]
    image_png: bytes | None
    completion: Completion

    @property
    def text(self) -> str:
        return self.completion.text


@dataclass
class Episode:
    """Book-keeping of one episode: the current screen, calls, seeds, steps and the budget.

    ``screen`` is the screen as the agent is shown it (``Environment.observe``), so actions
    are taken in its pixels; ``system_prefix`` is the prefix in force for it.
    """

    adapter: FrameworkAdapter
    env: Environment
    provider: Provider
    instance_id: str
    repeat: int
    seed: int
    system_prefix: str = ""
    max_steps: int = 3
    screen: Screen | None = None  # what the phone shows now (set by ``start``)
    previous: Screen | None = None  # what it showed before the last action
    steps: list[Step] = field(default_factory=list)
    calls: int = 0
    acting_calls: int = 0
    last_action: Action | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    # the last acting reply held no action and the original let the loop go on (faithful):
    # a run whose steps run out on it ends PARSE_ERROR, not "ran out of steps"
    unread: tuple[Turn, str] | None = None
    confirmations: list[str] = field(default_factory=list)
    # the reply being read: asked for, not yet recorded (``FrameworkAdapter.run_episode``
    # stores it if its reader raises)
    pending: Turn | None = None
    _raw: Screen | None = field(default=None, init=False, repr=False)  # as env returned it
    _own_prefix: str = field(default="", init=False, repr=False)

    def __post_init__(self) -> None:
        self._own_prefix = self.system_prefix

    async def start(self) -> Screen:
        self.screen = await self._observe(self.env.reset())
        return self.screen

    async def _observe(self, raw: Screen) -> Screen:
        """The agent's view of a new screen; a blocked step ends the episode here."""
        seen = await self.env.observe(raw)
        self.steps.extend(
            dataclasses.replace(s, screen=s.screen or raw.id, page=s.page or raw.page)
            for s in seen.steps
        )
        self.verdicts.extend(seen.verdicts)
        self._raw = raw
        if seen.blocked is not None:
            raise End(Outcome.BLOCKED, seen.blocked)
        self.system_prefix = (
            seen.system_prefix if seen.system_prefix is not None else self._own_prefix
        )
        return seen.screen

    @property
    def now(self) -> Screen:
        """The current screen (the episode has started)."""
        assert self.screen is not None, "Episode.start() first"
        return self.screen

    @property
    def before(self) -> Screen:
        """The screen before the last action (the current one before any action)."""
        return self.previous if self.previous is not None else self.now

    @property
    def interactive(self) -> bool:
        """An app that moves between screens (not a single decision screen)."""
        return self.env.interactive

    @property
    def instruction(self) -> str:
        return self.env.instruction

    @property
    def context(self) -> tuple[str, ...]:
        return tuple(self.env.context)

    def observation(self, shown: Shown | None) -> Observation:
        """What offline agents read: the image as shown and boxes in its pixels."""
        env, screen = self.env, self.now
        if shown is None:
            return Observation(
                env.instruction, screen.image, env.language, screen.ui,
                dict(screen.candidate_boxes), tuple(env.acceptable), screen.page,
            )  # fmt: skip
        boxes = {c: scale_box(b, shown.sx, shown.sy) for c, b in screen.candidate_boxes.items()}
        ui = scale_ui(screen.ui, shown.sx, shown.sy)
        return Observation(
            env.instruction, shown.image, env.language, ui, boxes, tuple(env.acceptable),
            screen.page,
        )  # fmt: skip

    def system_message(self, body: str) -> Message:
        """The framework's system prompt ``body`` behind the prefix in force."""
        return Message("system", (TextPart(system_text(self.system_prefix, body)),))

    @property
    def budget_left(self) -> bool:
        return self.acting_calls < self.max_steps

    async def ask(
        self,
        role: str,
        messages: Sequence[Message],
        *,
        shown: Shown | None,
        answer: AnswerFn,
        acting: bool = False,
        tools: tuple[ToolSpec, ...] = (),
    ) -> Turn:
        """Send one request (with ``tools`` for a tool-protocol framework); a refusal ends the
        episode (after recording the step)."""
        request = Request(
            messages=tuple(messages),
            seed=self.seed + self.calls,
            instance_id=self.instance_id,
            repeat=self.repeat,
            call=self.calls,
            role=role,
            temperature=self.adapter.temperature,
            max_tokens=self.adapter.max_tokens,
            observation=self.observation(shown),
            answer=answer,
            tools=tools,
        )
        self.calls += 1
        if acting:
            self.acting_calls += 1
        completion = await self.provider.complete(request)
        sent = completion.sent if completion.sent is not None else request.messages
        turn = Turn(role, sent, shown.png if shown else None, completion)
        self.pending = turn
        if completion.refusal:
            self.record(turn, None, error=REFUSED)
            raise End(Outcome.REFUSAL, REFUSED)
        return turn

    def record(
        self,
        turn: Turn,
        action: Action | None,
        error: str | None = None,
        *,
        seen: Screen | None = None,
    ) -> None:
        """Store a turn as a step: on ``seen``, the screen the model wrote it for (default:
        the current one; a loop that runs a turn's actions before recording it passes the
        screen the turn began on)."""
        c = turn.completion
        if turn is self.pending:
            self.pending = None
        screen = seen if seen is not None else self.now
        self.steps.append(
            Step(
                role=turn.role,
                prompt=render_messages(turn.messages),
                image_png=turn.image_png,
                reply=c.transcript,
                action=action,
                input_tokens=c.input_tokens,
                output_tokens=c.output_tokens,
                latency_s=c.latency_s,
                cost_usd=c.cost_usd,
                error=error,
                screen=screen.id,
                page=screen.page,
            )
        )
        if action is not None:
            self.last_action = action

    async def act(self, action: Action) -> Transition:
        """Apply an action to the phone; a commit or the end of the episode raises ``End``.

        ``none`` and ``finish`` never reach the phone (they are the framework's own moves).
        ``ask_user`` hands the choice back to a person and ends the episode ⊥ ASKED_USER (we do
        not invent the person's answer). An action with ``confirm`` is recorded as a
        confirmation request; the adapter's ``confirm`` answer ``decline`` ends the episode ⊥
        before the action reaches the phone. A tap the app ignores leaves the same screen (the
        same object, not observed again) and the episode goes on; a new screen is observed
        before the agent sees it.
        """
        here = self.now
        if action.kind == "ask_user":
            question = " ".join((action.text or "").split())
            raise End(
                Outcome.ASKED_USER, f"{ASKED}: {question!r}" if question else ASKED, None, action
            )
        if action.confirm is not None:
            self.confirmations.append(action.confirm)
            if self.adapter.confirm == "decline":
                self.previous = here
                raise End(Outcome.NO_COMMIT, DECLINED, None, action)
        if action.kind in ("none", "finish"):
            self.previous = here
            return Transition(here, event="no effect")
        t = self.env.step(action)
        if t.committed is not None:
            raise End(Outcome.COMMITTED, "", t.committed, action)
        if t.ended is not None:
            raise End(Outcome.NO_COMMIT, t.ended, None, action)
        screen = here if t.screen is self._raw else await self._observe(t.screen)
        self.previous, self.screen = here, screen
        return dataclasses.replace(t, screen=screen)

    def unparseable(self, turn: Turn, err: ReplyError) -> NoReturn:
        """Record the failed step and end with PARSE_ERROR (FRAMEWORK_ERROR for a crash)."""
        self.record(turn, None, error=str(err))
        if isinstance(err, FrameworkError):
            raise End(Outcome.FRAMEWORK_ERROR, f"framework error ({err}): {excerpt(turn.text)!r}")
        raise End(Outcome.PARSE_ERROR, f"unparseable reply ({err}): {excerpt(turn.text)!r}")

    def reader_crashed(self, err: Exception) -> End:
        """The reply being read made its reader raise (a backstop: readers raise ReplyError
        for what they cannot read): the step is stored and the run ends FRAMEWORK_ERROR."""
        turn = self.pending
        assert turn is not None
        what = type(err).__name__
        self.record(turn, None, error=excerpt(f"{what}: {err}", 200))
        return End(
            Outcome.FRAMEWORK_ERROR,
            f"framework error ({what} reading the reply): {excerpt(turn.text)!r}",
        )

    def decision(self, end: End) -> Decision:
        return Decision(
            candidate=end.candidate,
            outcome=end.outcome,
            cause=end.cause,
            action=end.action if end.action is not None else self.last_action,
            steps=tuple(self.steps),
            verdicts=tuple(self.verdicts),
            confirmations=tuple(self.confirmations),
        )


_READER_CRASHES = (
    ArithmeticError, AttributeError, LookupError, MemoryError, RecursionError, TypeError,
    ValueError,
)  # fmt: skip
"""What a reader can raise on a reply it was not written for (``Episode.reader_crashed``)."""


class FrameworkAdapter(Adapter):
    """An adapter whose ``run`` raises ``End``; falling off the end means out of steps.

    ``parse`` is ``faithful`` (read replies as the original framework's code does, crashes
    included) or ``robust`` (tolerant); ``prompts`` a folder of user prompt templates
    (``_prompts``), one file per role in ``prompt_roles``.
    """

    default_max_tokens: int = 1024
    # what the simulated user answers a confirmation request (``CONFIRM_ANSWERS``); frameworks
    # that ask for confirmations take it as the ``confirm`` option
    confirm: str = "accept"
    episode_steps: int = 20  # acting calls allowed in an interactive episode
    # role -> placeholder names its template may use (see `dibench docs frameworks`)
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {}
    # the framework's packaged wording (``<framework>/prompts/``), read like ``prompts=DIR``
    prompt_folder: ClassVar[Path | None] = None

    def __init__(
        self,
        *,
        max_steps: int | None = None,
        episode_steps: int | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        parse: str = "faithful",
        prompts: str | None = None,
    ) -> None:
        if parse not in PARSE_MODES:
            raise ValueError(f"parse={parse!r}: expected one of {', '.join(PARSE_MODES)}")
        self.parse = parse
        self.prompts = PromptTemplates(
            prompts, self.prompt_roles, self.name, packaged=self.prompt_folder
        )
        if max_steps is not None:
            if max_steps < 1:
                raise ValueError("max_steps must be at least 1")
            self.max_steps = max_steps
        if episode_steps is not None:
            if episode_steps < 1:
                raise ValueError("episode_steps must be at least 1")
            self.episode_steps = episode_steps
        self.temperature = temperature
        self.max_tokens = max_tokens or self.default_max_tokens

    async def decide(self, inp: AgentInput, provider: Provider) -> Decision:
        """One decision screen: an episode over ``StaticScreen(inp)``."""
        return await self.run_episode(
            StaticScreen(inp),
            provider,
            instance_id=inp.instance_id,
            repeat=inp.repeat,
            seed=inp.seed,
            system_prefix=inp.system_prefix,
        )

    async def run_episode(
        self,
        env: Environment,
        provider: Provider,
        *,
        instance_id: str,
        repeat: int,
        seed: int,
        system_prefix: str = "",
        max_steps: int | None = None,
    ) -> Decision:
        """Drive the framework's loop over ``env`` until a commit, an end or the step limit.

        ``max_steps`` (acting calls) defaults to ``max_steps`` on a static screen and to
        ``episode_steps`` on an interactive app.
        """
        if max_steps is None:
            max_steps = self.episode_steps if env.interactive else self.max_steps
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        ep = Episode(
            self, env, provider, instance_id, repeat, seed, system_prefix, max_steps=max_steps
        )
        try:
            await ep.start()
            await self.run(ep)
        except End as end:
            return ep.decision(end)
        except _READER_CRASHES as err:
            # a hostile reply (nesting, size, odd characters) that slipped past a reader's own
            # checks ends the run with the reply stored, never a traceback
            if ep.pending is None or isinstance(err, DIBenchError):
                raise
            return ep.decision(ep.reader_crashed(err))
        if ep.unread is not None:
            turn, why = ep.unread
            return ep.decision(
                End(Outcome.PARSE_ERROR, f"unparseable reply ({why}): {excerpt(turn.text)!r}")
            )
        return ep.decision(End(Outcome.NO_COMMIT, OUT_OF_STEPS))

    @abstractmethod
    async def run(self, ep: Episode) -> None:
        """Drive the framework's roles until an ``End`` is raised or the budget is spent."""

    def options(self) -> dict[str, object]:
        """Framework-specific settings for ``describe`` (override to add)."""
        return {}

    def describe(self) -> dict[str, object]:
        return {
            **super().describe(),
            "episode_steps": self.episode_steps,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "parse": self.parse,
            "prompts": self.prompts.fingerprint(),
            **self.options(),
        }

    def section(self, name: str, shown: object, values: Mapping[str, object] | None = None) -> str:
        """The packaged part ``name`` filled with ``values`` when ``shown`` is truthy, else ""
        (a section the framework's wording shows only when it has content)."""
        return self.prompts.part(name, values) if shown else ""

    @property
    def faithful(self) -> bool:
        """Replies are read as the original framework's code reads them."""
        return self.parse == "faithful"
