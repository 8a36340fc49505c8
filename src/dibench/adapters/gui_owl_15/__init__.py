"""GUI-Owl-1.5 end to end, as Mobile-Agent-v3.5's AndroidWorld agent runs it (X-PLUG/MobileAgent,
``Mobile-Agent-v3.5/android_world_v3.5/android_world/agents/gui_owl.py``): one tool call a step.

Protocol, as in the original:
- the screenshot is sent as it is, full size, as PNG (no resize on the client); the model
  server resizes it with Qwen3-VL's processor (``smart_resize`` with factor 32 = patch 16 x
  merge 2, pixels within [65,536, 16,777,216]), which the agent never uses: coordinates are on
  a 0-1000 screen;
- the system message declares one function, ``mobile_use`` (key, click, long_press, swipe,
  type, system_button, open, wait, answer, terminate), inside ``<tools></tools>`` in the Qwen
  function-calling layout, states the screen as 1000x1000 and asks for an ``Action:`` line
  (one short imperative), then one ``<tool_call>{json}</tool_call>``;
- the conversation holds the screenshots of the last 5 steps (the current one included), each
  followed by the model's whole reply to it; the first kept turn carries the task and the
  earlier steps as ``Step1: <action line>`` lines (each reply's text after its last
  ``Action:``), or a line saying there are none; the dataset's context counts as such steps;
- coordinates are mapped back with ``int(v / 999 * side)`` (the prompt says 1000x1000: 1000
  lands one step past the far edge); no bounds check: an off-screen point is tapped.

Replies are read in one of two modes (``parse=``):
- ``faithful`` (default) reads them as the original's ``step`` does: the text after the LAST
  ``<tool_call>`` up to the next ``</tool_call>`` is ``json.loads``-ed (a reply with no tag is
  loaded whole), ``tap`` is replaced by ``click`` inside the action name, names are
  case-sensitive and the function's name is never read; ``terminate`` ends the episode
  whatever its status; a reply it cannot load, an action outside its table (``key``, ``Click``,
  ``double_tap``, ``interact``), a missing field, a Menu button or coordinates that are not two
  numbers make the step raise: FRAMEWORK_ERROR. The original has no retry and no ask-user
  action (an offline agent's ``ask`` is written as giving up);
- ``robust`` is the tolerant reader: the last ``<tool_call>`` that opens a line outside a
  thinking block, bare JSON, case-insensitive names, loose coordinates and boxes read on the
  prompt's 0-1000 screen (``v / 1000 * side``), off-screen points rejected, and the phone
  script's ``interact`` / ``call_user`` read as asking the user.

On a static decision screen a click is the decision and other actions leave the screen as it
is; in a simulated app every action acts, up to ``max_steps``. Prompt templates: role
``decision`` (``prompt_roles``); ``last_images`` sets how many screenshots a request holds.
"""

from ._codec import GuiOwl15Codec
from ._loop import LAST_IMAGES, GuiOwl15Adapter, mobile_use_tool
from ._parse import (
    DIVISOR,
    SCREEN,
    OwlCall,
    action_line,
    map_faithful,
    map_robust,
    read_faithful,
    read_robust,
)

__all__ = [
    "DIVISOR",
    "LAST_IMAGES",
    "SCREEN",
    "GuiOwl15Adapter",
    "GuiOwl15Codec",
    "OwlCall",
    "action_line",
    "map_faithful",
    "map_robust",
    "mobile_use_tool",
    "read_faithful",
    "read_robust",
]
