"""A framework's reply format in both directions: ``read`` a reply, ``write`` one.

Every framework describes its reply syntax once, in its own sub-package (``<framework>/_codec.py``):
its readers (faithful and robust, the ones the loop uses) and a writer that says one step in
the framework's exact syntax and coordinate space. Everything else that must speak a
framework's syntax is made from ``write``: the offline agents' replies (each loop's ``answer``
renderers), the ``mimic-*`` probes, the attack grammar's action-syntax moves and the tests'
reply tables. So no framework's syntax is spelled outside its sub-package (a test greps
``src/`` for each codec's ``markers``).

How a framework provides its codec:

- subclass ``Codec`` in ``<framework>/_codec.py``: set ``framework`` (the adapter's registry
  name), ``kinds`` (the action kinds ``write`` can say), ``markers`` (strings only this
  framework's syntax contains, or only its family's: the Qwen-family codecs that write the
  tool-call tag all list it; for the grep test), implement ``read`` and ``write``; where
  the framework has them, ``mimic`` (its ``mimic-*`` probes' hooks), ``quote`` and
  ``quote_head`` (the attack grammar's action move), ``views``/``kinds_in`` (variants of the
  format with fewer moves), ``quantum`` and ``stable`` (what the round trip can promise);
- the adapter class returns it from ``codec()``, configured by the adapter's own options
  (GUI-Owl's coordinate space, Qwen-VL's tool variant, ...): ``FrameworkAdapter.codec`` is the
  hook, ``make_adapter(name).codec()`` finds any registered framework's codec, and
  ``codec_of(name)`` does both (the property test walks ``ADAPTERS`` this way, so a new
  framework needs no edit to shared tests).

Coordinates: ``Say.action`` and what ``read`` returns are in the pixels of the image the model
was shown (``Frame``); the codec maps them to and from the framework's own space (absolute
pixels, a 0-999 or 0-1000 grid, AppAgent's tags or grid areas, the direct baseline's item
numbers). A framework's writer rounds as its model would, so ``read(write(x))`` is ``x`` up
to that rounding (``quantum``), and the step read back is written and read back as itself
(exactly where the model writes pixels or names regions, unless ``stable`` says otherwise).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from dibench._values import Box

from ._base import Action, ActionKind
from ._moves import AnswerFn, Move, read_move, swipe_end
from ._replies import PARSE_MODES

__all__ = ["SPACINGS", "Codec", "Frame", "Say", "move_action"]

# JSON spacings, most usual first: a quote wraps only at spaces, so the tighter forms trade the
# look of a model's output for fitting a narrow title (``Codec.mimic``).
SPACINGS: tuple[tuple[str, str], ...] = ((", ", ": "), (", ", ":"), (",", ":"))


@dataclass(frozen=True)
class Frame:
    """What a reply's coordinates refer to: the image the model was shown.

    ``marks`` are the numbered things the model can name instead of a point (AppAgent's tags,
    the direct baseline's items), mark n being ``marks[n - 1]``; ``view`` names a
    framework-specific variant of its format (``"grid"``: AppAgent's grid round; ``"app"``:
    the direct baseline inside an app).
    """

    width: int
    height: int
    marks: tuple[Box, ...] = ()
    view: str = ""


@dataclass(frozen=True)
class Say:
    """One step as a framework's model writes it: what ``write`` takes.

    ``action`` is the step (a tap, long press, swipe, type, back, home, wait; ``finish`` to
    stop, with its message; ``ask_user`` to hand the choice back, with the question; ``none``
    to give up, with the reason; ``tap_element`` names ``marks[element]``), in the pixels of
    the ``Frame``; a swipe starts at (x, y) and moves in ``direction`` (its end is
    ``swipe_end``'s). ``thought`` is the reasoning the format puts first; ``note`` the field
    it puts after the action (AppAgent's Summary, v2's Operation, E's and v3's Description,
    GUI-Owl's conclusion, Qwen-VL's Action line), each codec's default when empty.
    """

    action: Action
    thought: str = ""
    note: str = ""
    # further fields of the format, as a codec documents them (AppAgent: "observation")
    extra: dict[str, str] = field(default_factory=dict)


class Codec(ABC):
    """A framework's reply format: ``read`` (as the loop reads) and ``write`` (as a model would
    write). One instance is configured by its adapter's options (see the module docstring)."""

    framework: str = ""
    kinds: frozenset[ActionKind] = frozenset()  # what write can say
    modes: tuple[str, ...] = PARSE_MODES  # the read modes it has
    markers: tuple[str, ...] = ()  # syntax only this framework (or family) writes: grep test
    views: tuple[str, ...] = ("",)  # the Frame.view values its format has
    stop_text: bool = True  # a finish carries its message (AppAgent's FINISH does not)
    directions: tuple[str, ...] = ("up", "down", "left", "right")  # swipes it can say

    def kinds_in(self, frame: Frame) -> frozenset[ActionKind]:
        """What ``write`` can say on ``frame`` (``kinds`` unless a view has fewer)."""
        return self.kinds

    def stable(self, frame: Frame) -> bool:
        """Whether a step read back is written and read back as itself on ``frame`` (False
        where the original's reader maps to points its own format names differently)."""
        return True

    def mimic(self, action: Action, frame: Frame, lead: str, variant: str = "") -> list[str]:
        """Quotes of ``action`` that the framework's faithful reader takes for the reply's own
        action, fullest first, the last the shortest: the hooks of its ``mimic-*`` probes.

        ``lead`` is a merchant's lead-in, used where the form has room for it; ``variant``
        ``"tag"`` breaks out of the format's tags (closing the thinking first). [] when the
        framework has no such quote for the action or variant."""
        return []

    space: str = "screen"  # what write's numbers count: screen, resized, grid, tags or items
    quote_head: str = ""  # ``quote`` without its target: a generic form that fits any target

    def quote(self, action: Action, frame: Frame) -> str | None:
        """``action`` as one quotable line, closed so that the reader's action ends after it
        (the attack grammar's action-syntax move); None when the framework has none."""
        return None

    def quantum(self, frame: Frame) -> float | None:
        """How far (frame pixels) a point read back may lie from the one written: the
        rounding of the framework's coordinate space; None where the format names regions
        (tags, items, grid areas) rather than points."""
        return 1.0

    @abstractmethod
    def read(self, reply: str, frame: Frame, *, mode: str = "faithful") -> Action:
        """The acting step a reply holds, in ``frame`` pixels, read in ``mode`` (one of
        ``modes``); ``ReplyError``/``FrameworkError`` as the loop's reader raises them."""

    @abstractmethod
    def write(self, say: Say, frame: Frame) -> str:
        """The whole reply a model following the framework's prompt writes for ``say``.

        ``none`` (giving up, ``text`` the reason) is accepted by every codec and said as the
        framework's own stop; ``ask_user`` likewise where the framework has no way to ask (not
        in ``kinds``); any other kind not in ``kinds`` is a ValueError."""

    def refuse(self, action: Action) -> None:
        """``ValueError`` when ``write`` cannot say ``action``'s kind."""
        if action.kind not in self.kinds:
            raise ValueError(f"{self.framework}: cannot write a {action.kind!r} action")

    @staticmethod
    def swipe_end(action: Action, frame: Frame) -> tuple[int, int]:
        """Where a swipe ``action`` ends on the frame (``swipe_end``: 40 % of the side)."""
        move = Move("swipe", action.x or 0.0, action.y or 0.0, action.direction or "up")
        return swipe_end(move, frame.width, frame.height)

    def answer(self, frame: Frame) -> AnswerFn:
        """An offline agent's renderer (``Request.answer``): its decision said by ``write``."""

        def answer(decision: tuple[object, ...]) -> str:
            return self.write(Say(move_action(read_move(decision))), frame)

        return answer


def move_action(move: Move) -> Action:
    """An offline agent's ``Move`` as the ``Action`` a codec writes (ask -> ask_user, none ->
    none: each codec says giving up as its framework's stop)."""
    if move.kind in ("tap", "swipe"):
        direction = move.direction if move.kind == "swipe" else None
        return Action(move.kind, x=move.x, y=move.y, direction=direction)  # type: ignore[arg-type]
    if move.kind == "ask":
        return Action("ask_user", text=move.text)
    if move.kind == "type":
        return Action("type", text=move.text)
    if move.kind == "back":
        return Action("back")
    return Action("none", text=move.text)
