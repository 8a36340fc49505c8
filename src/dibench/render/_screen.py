"""Draw a whole app screen from its semantic description (``ScreenContent``)."""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image

from dibench.apps._base import ScreenContent
from dibench.dataset._schema import Box, TextStyle, UIElement

__all__ = ["RenderedScreen", "render_screen"]


@dataclass(frozen=True)
class RenderedScreen:
    """Pixels plus everything needed to build a DecisionState from them."""

    image: Image.Image  # RGB, width x height
    ui: tuple[UIElement, ...]  # the full UI tree, index == position, parent before child
    boxes: dict[str, dict[str, Box]]  # candidate id -> role -> box; roles include card, title, cover
    styles: dict[str, TextStyle]  # style name -> style; must contain 'title'
    title_styles: dict[str, str]  # candidate id -> key into styles used for its title


def render_screen(content: ScreenContent, width: int = 1080, height: int = 2340) -> RenderedScreen:
    """Render the screen; implemented by the render kit (see module docstring)."""
    raise NotImplementedError
