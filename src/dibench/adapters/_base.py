"""The values every adapter shares: the decision screen, actions, steps, verdicts and results.

An adapter turns an ``AgentInput`` (the decision screen) into one or more provider calls in its
framework's protocol, parses the replies as that framework does, and maps the final action to a
candidate (element label -> element -> candidate; coordinate -> candidate box). Everything the model
was shown is kept in the ``Decision`` so a person can inspect it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from PIL import Image

from dibench._values import Box, InstanceId, Outcome, UIElement

__all__ = [
    "Action",
    "AgentInput",
    "Decision",
    "Step",
    "Verdict",
    "candidate_at",
]

ActionKind = Literal[
    "tap",
    "tap_element",
    "long_press",
    "swipe",
    "type",
    "back",
    "home",
    "wait",
    "finish",
    "ask_user",
    "none",
]


@dataclass(frozen=True)
class AgentInput:
    """One decision screen for one run. Candidate boxes are for scoring, never shown to a model.

    ``instance_id`` carries the instance's pair, target and probe (a plain string given here is
    taken as a benign id, see ``InstanceId.of``).
    """

    instance_id: InstanceId
    repeat: int
    seed: int
    instruction: str
    context: tuple[str, ...]
    language: str
    screenshot: Image.Image  # exactly what the phone shows (benign or injected)
    ui: tuple[UIElement, ...]
    candidate_boxes: dict[str, Box]  # candidate id -> card box, in screenshot pixels
    acceptable: tuple[str, ...] = ()  # only the oracle agent may read it (via Observation)
    system_prefix: str = ""  # prepended to the system prompt (prompt-mitigation defenses)
    # The screenshot's PNG encoding when it was read from disk (benign or materialised
    # injected screens): sent as is. Whoever changes ``screenshot`` must drop it (set None).
    screenshot_png: bytes | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.instance_id, InstanceId):
            object.__setattr__(self, "instance_id", InstanceId.of(self.instance_id))


@dataclass(frozen=True)
class Action:
    """The canonical action every adapter emits; coordinates are in screenshot pixels."""

    kind: ActionKind
    x: float | None = None
    y: float | None = None
    element: int | None = None  # index into AgentInput.ui for tap_element
    text: str | None = None  # typed text, the finish/answer message, or ask_user's question
    direction: str | None = None  # swipe: up/down/left/right
    # a tap the framework asks the user to confirm before it is made (AutoGLM's sensitive
    # operation): the message shown to the user; the episode records it and the adapter's
    # ``confirm`` answer (accept/decline) decides whether the tap happens
    confirm: str | None = None


@dataclass(frozen=True)
class Step:
    """One model call: what was shown, what came back, how it was read."""

    role: str  # decision, planning, reflection, manager, operator, ...
    prompt: str  # the full text of the messages sent (system + user), images replaced by markers
    image_png: bytes | None  # the (annotated/resized) image the model saw, if any
    reply: str
    action: Action | None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    error: str | None = None
    screen: str = ""  # id of the screen the step looked at (simulators: page + scroll state)
    page: str = ""  # kind of that screen: "decision" (a static dataset screen), home, list, ...


@dataclass(frozen=True)
class Verdict:
    """What one detector concluded about one observation (recorded whether it fired or not).

    ``score`` is the detector's confidence that the screen carries an injection (higher = more
    suspicious; None when the detector has no score). ``flagged`` names what it flagged: a
    candidate id, a UI element text, or "" for the whole screen.
    """

    defense: str  # the detector's spec as written by the user, e.g. "keyword-detector:policy=warn"
    fired: bool
    score: float | None = None
    flagged: str = ""
    policy: str = ""  # block, warn, mask, flag (record only)
    stage: str = "input"  # input (before the model sees the screen) or action (after it replied)
    detail: str = ""


@dataclass(frozen=True)
class Decision:
    """The run's result: a candidate or None (⊥) with the cause."""

    candidate: str | None
    outcome: Outcome
    cause: str = ""
    action: Action | None = None
    steps: tuple[Step, ...] = field(default_factory=tuple)
    verdicts: tuple[Verdict, ...] = field(default_factory=tuple)  # detector defenses, in order
    # the messages of the confirmations the agent asked for, in order (AutoGLM's sensitive taps)
    confirmations: tuple[str, ...] = ()

    @property
    def question(self) -> str:
        """What the agent asked the user when it handed the choice back (ASKED_USER), else ""."""
        if self.outcome != Outcome.ASKED_USER or self.action is None:
            return ""
        return self.action.text or ""

    @property
    def input_tokens(self) -> int:
        return sum(s.input_tokens for s in self.steps)

    @property
    def output_tokens(self) -> int:
        return sum(s.output_tokens for s in self.steps)

    @property
    def cost_usd(self) -> float:
        return sum(s.cost_usd for s in self.steps)

    @property
    def latency_s(self) -> float:
        return sum(s.latency_s for s in self.steps)


def candidate_at(boxes: dict[str, Box], x: float, y: float) -> str | None:
    """The candidate whose card contains the point, or None (a tap outside every candidate)."""
    for cid, box in boxes.items():
        if box.contains(x, y):
            return cid
    return None
