"""GUI-Owl end to end (X-PLUG/MobileAgent; Mobile-Agent-v3's model alone): one tool call a step.

Protocol, as in GUI-Owl's Android agent (``Mobile-Agent-v3/.../agents/gui_owl.py``):
- the screenshot is resized the way the Qwen2.5-VL processor does (``smart_resize``: both
  sides multiples of 28, pixel count within [min_pixels, max_pixels]) and sent as PNG, as the
  original's client does; the tool description states that resized resolution, so coordinates
  come back in resized pixels;
- the system prompt declares one function, ``mobile_use``, inside ``<tools></tools>`` in the
  Qwen function-calling layout; the user turn gives the query, the progress so far
  ("Step 1: ...; ") and asks for ``<thinking>``, then ``<tool_call>{json}</tool_call>``, then
  ``<conclusion>``, then the screenshot;
- actions: click, long_press, swipe, type, answer, system_button (Back/Home/Menu/Enter),
  wait, terminate (success/failure); each conclusion becomes the next step's history.

Replies are read in one of two modes (``parse=``):
- ``faithful`` (default) reads them as the original's ``step`` does: it needs ``<thinking>``
  followed by a newline (or a ``</think>``), takes the text from the FIRST
  ``{"name": "mobile_use"`` anywhere in the reply (inside the thinking too) up to the first
  ``}}`` + newline, and ``json.loads`` it; ``tap`` is replaced by ``click`` inside the action
  name, names are case-sensitive, coordinates go through ``int(x / resized * original)``; a
  reply it cannot read (no thinking, no call, no ``<conclusion>`` + newline, compact JSON,
  an unknown action, a missing field, string coordinates...) makes the original raise, and
  the run ends with FRAMEWORK_ERROR; an off-screen tap is simply tapped;
- ``robust`` is the tolerant reader (any JSON ``mobile_use`` call, inside ``<tool_call>`` if
  there is one, case-insensitive names, loose coordinates, off-screen points rejected).

``coords="norm1000"`` reads coordinates on the 0-1000 scale of GUI-Owl 1.5 / Qwen3-VL
instead (the tool then states a 1000x1000 screen). Clicks and swipes are mapped back to
screenshot pixels before they reach the phone. On a static decision screen a click is the
decision and other actions leave the screen as it is; in a simulated app every action acts,
up to ``max_steps``. Prompt templates: role ``decision`` (``prompt_roles``).
"""

from ._loop import MAX_PIXELS, MIN_PIXELS, GuiOwlAdapter, smart_resize
from ._parse import Geometry, ToolCall, parse_owl_tool_call, read_owl_call_faithful

__all__ = [
    "MAX_PIXELS",
    "MIN_PIXELS",
    "Geometry",
    "GuiOwlAdapter",
    "ToolCall",
    "parse_owl_tool_call",
    "read_owl_call_faithful",
    "smart_resize",
]
