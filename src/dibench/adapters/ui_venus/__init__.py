"""UI-Venus-1.5 (inclusionAI/UI-Venus, ``models/navigation/``): Ant Group's navigation agent,
one call a step.

Protocol, as in the original's agent (``ui_venus_navi_agent.py``), model wrapper
(``ui_venus_navi_vllm.py``), prompts and parser (``utils.py``) and run script
(``scripts/run_navi.sh``):
- the screenshot is resized as qwen-vl-utils does before the model sees it (``smart_resize``
  with factor 28, min_pixels 3136, max_pixels 12845056, bicubic) and sent as PNG; replies
  give points in pixels of that resized image;
- each step is one fresh conversation: the system line "You are a helpful assistant.", then
  one user turn with the prompt (task, past steps, the 13 actions, the reply layout) before
  the image. Past steps are ``Step i: <think>..</think><action>..</action>`` lines, the last
  ``history`` of them (5, run_navi.sh's setting; 0 keeps all), numbered from 0 in that window;
  a failed step is kept too;
- sampling: temperature 0.0, max_tokens 2048 (repetition_penalty 1.05 in the original is not
  part of a DIBench request);
- actions: Click, LongPress, Drag, Scroll (start/end, or a direction), Type, Launch (no effect
  here), Wait, Finished (the task ends: ⊥ gave up), CallUser (the agent asks the user: ⊥
  asked_user), PressBack, PressHome, PressEnter and PressRecent (no effect here);
- points map back as ``int(v * side / resized_side)``, kept within [0, side].

Replies are read in one of two modes (``parse=``):
- ``faithful`` (default) reads them as the original's ``step``: the text after the FIRST
  ``<think>``, ``<action>`` and ``<conclusion>`` (anywhere, a quoted tag inside the thinking
  included) up to its closing tag; a reply without one of the three opening tags raises
  outside any ``try`` and ends the run (FRAMEWORK_ERROR). The action text must be ONE call
  ``Name(args)`` (case-sensitive names; single quotes are stripped from values, double quotes
  kept; points ``(x,y)`` of unsigned numbers); anything else is a failed step: it does
  nothing, the loop goes on (a run that ends on it is PARSE_ERROR);
- ``robust`` takes the first ``<action>`` outside the thinking (or a bare call), names in any
  case, either quotes, ``[x,y]`` and boxes (centre), and rejects points off the image and
  unknown names.

On a static decision screen a click is the decision and other actions leave the screen as it
is; in a simulated app every action acts, up to ``max_steps``. Prompt templates: role
``decision`` (``prompt_roles``).
"""

from ._codec import (
    VenusCodec,
    VenusReply,
    action_block,
    action_call,
    read_faithful,
    read_robust,
    write,
)
from ._loop import FACTOR, HISTORY, MAX_PIXELS, MIN_PIXELS, UiVenusAdapter, venus_size

__all__ = [
    "FACTOR",
    "HISTORY",
    "MAX_PIXELS",
    "MIN_PIXELS",
    "UiVenusAdapter",
    "VenusCodec",
    "VenusReply",
    "action_block",
    "action_call",
    "read_faithful",
    "read_robust",
    "venus_size",
    "write",
]
