"""GELab-Zero's loop: one user turn a step (prompt, screenshot, instructions), the last reply's
summary as the history, and how offline agents answer in its format.

The framework itself is described in the package docstring (``__init__.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from dibench._values import Outcome
from dibench.providers import ImagePart, Message, TextPart

from .._adapter import ADAPTERS
from .._base import Action
from .._episode import GAVE_UP, End, Episode, FrameworkAdapter, system_text
from .._images import JPEG_PASS, Shown, show
from .._replies import FrameworkError, ReplyError
from ._codec import GelabCodec, GelabReply, summary_faithful

__all__ = ["JPEG_QUALITY", "GelabAdapter"]

JPEG_QUALITY = 85  # the client's make_b64_url, and again the server's save_image
_CODEC = GelabCodec()
_IMAGE = "\x00screenshot\x00"  # where the template places the image (split out of the text)


@ADAPTERS.register("gelab")
class GelabAdapter(FrameworkAdapter):
    """GELab-Zero's phone agent (see the package docstring)."""

    name = "gelab"
    max_steps = 3
    default_max_tokens = 4096  # the example's model args
    prompt_roles: ClassVar[dict[str, tuple[str, ...]]] = {
        "decision": ("instruction", "history", "screenshot"),
    }
    prompt_folder = Path(__file__).parent / "prompts"

    def codec(self) -> GelabCodec:
        """Its reply format (the shared codec hook)."""
        return _CODEC

    def read(self, text: str, width: int, height: int) -> tuple[GelabReply, Action]:
        """A reply about a ``width`` x ``height`` screenshot, read in the parse mode
        (FrameworkError where the original raises; ReplyError where robust cannot read)."""
        return _CODEC.read_step(text, (width, height), self.parse)

    def _messages(self, ep: Episode, shown: Shown, history: str) -> list[Message]:
        """One user turn: the text before the screenshot, the screenshot, the text after it.
        The original has no system turn: a defense's prefix goes in front of the first text,
        unless a ``decision.system.txt`` of the user's asks for a system turn."""
        values = {
            "instruction": ep.instruction,
            "history": history if history.strip() else self.prompts.part("no_history"),
            "screenshot": _IMAGE,
        }
        text = self.prompts.render("decision", values)
        before, _, after = text.partition(_IMAGE)
        system = self.prompts.render("decision", {}, system=True)
        if not system:
            before = system_text(ep.system_prefix, before)
        parts: list[TextPart | ImagePart] = [TextPart(before), shown.part]
        if after:
            parts.append(TextPart(after))
        user = Message("user", tuple(parts))
        return [ep.system_message(system), user] if system else [user]

    async def run(self, ep: Episode) -> None:
        history = "; ".join(ep.context)  # steps before this screen, as one summary
        last: GelabReply | None = None
        while ep.budget_left:
            if last is not None:
                try:
                    history = summary_faithful(last) if self.faithful else last.text("summary")
                except FrameworkError as err:
                    raise End(Outcome.FRAMEWORK_ERROR, f"framework error ({err})") from None
            screenshot = ep.now.image
            # the client encodes the screenshot as JPEG 85; the server decodes it and stores it
            # as JPEG 85 again, and that file is what the model is sent
            shown = await show(screenshot, ("gelab-jpeg", JPEG_QUALITY), None, ep.now.png,
                               jpeg=JPEG_QUALITY, step=(JPEG_PASS, JPEG_QUALITY))  # fmt: skip
            turn = await ep.ask(
                "decision",
                self._messages(ep, shown, history),
                shown=shown,
                answer=_CODEC.answer(shown.frame),
                acting=True,
            )
            try:
                last, action = self.read(turn.text, screenshot.width, screenshot.height)
            except ReplyError as err:
                ep.unparseable(turn, err)
            ep.record(turn, action)
            if action.kind == "finish":
                raise End(Outcome.NO_COMMIT, GAVE_UP, None, action)
            await ep.act(action)
