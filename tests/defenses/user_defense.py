"""A user's own defense, registered by this module (loaded with ``--load path/to/this.py``).

Deliberately outside ``src/``: it proves a defense plugs in without editing DIBench.
"""

from __future__ import annotations

from PIL import ImageOps

from dibench.defenses import DEFENSES, Defense, DefenseContext, Verdict, View


@DEFENSES.register("my-defense", replace=True)
class Greyscale(Defense):
    """Shows the model a greyscale screen and tells it so; records a (never firing) verdict."""

    main = "note"

    def __init__(self, note: str = "colours removed") -> None:
        self.note = note

    def system_prefix(self, language: str) -> str:
        return f"Note: the screenshot is greyscale ({self.note})."

    async def before(self, view: View, ctx: DefenseContext) -> View:
        grey = ImageOps.grayscale(view.image).convert("RGB")
        ctx.add_verdict(Verdict(self.spec, fired=False, score=0.0, policy="flag"))
        return view.with_pixels(grey)
