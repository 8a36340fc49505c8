"""GELab-Zero (stepfun-ai/gelab-zero): StepFun's phone agent, one call a step.

Protocol, as in the original's parser and prompt (``copilot_tools/parser_0920_summary.py``),
local server (``copilot_agent_server/local_server.py``), client (``copilot_agent_client/
pu_client.py``), executor (``copilot_front_end/pu_frontend_executor.py``), image tools and
example run (``examples/run_single_task.py``):
- the screenshot is sent full size as JPEG, encoded twice at quality 85 (the client's
  ``make_b64_url``, then the server stores the decoded image as JPEG 85 and sends that file);
- each step is one fresh conversation of ONE user turn, no system turn: the Chinese action
  space (9 actions, points on a 0-1000 grid), the task and the history, the screenshot, then
  the reply instructions. The history is the last reply's ``summary`` field alone ("no
  operations yet" before the first); a defense's system prefix goes in front of the first
  text, there being no system turn;
- sampling: max_tokens 4096 (the example's temperature 0.1 and top_p 0.95 are not DIBench's
  defaults: set ``--temperature``);
- actions: CLICK, TYPE (the keyboard is assumed up: typed where the focus is), COMPLETE and
  ABORT (the task ends: ⊥ gave up), WAIT, AWAKE (launches an app: no effect here), INFO (the
  agent asks the user: ⊥ asked_user; the original asks at the next step), SLIDE (point1 to
  point2), LONGPRESS, and the executor's own BACK, HOME, SCROLL and HOT_KEY;
- points map as ``v / 1000 * side`` (floats, sent to ``adb input tap`` as they are); an
  off-screen point is tapped.

Replies are read in one of two modes (``parse=``):
- ``faithful`` (default) reads them as the original's ``str2action`` and executor do: THINK
  tags normalised (``<think>``, ``<TINK>``, ``< THINK >``), the thinking cut out at the first
  ``</THINK>``, the rest split at TABS only (fields on lines or separated by spaces are one
  field), a repeated key keeps its LAST value, a ``point`` must be two integers; a parse
  failure, a missing parameter, an unknown or lower-case action name makes the original raise
  and the run ends (FRAMEWORK_ERROR). Building the next step's prompt raises too when the last
  reply had no ``explain``, lacked a parameter its type needs, or was BACK, HOME, SCROLL or
  HOT_KEY (which its prompt builder does not know): the action is made, then the run ends;
- ``robust`` reads fields split by tabs, newlines or spaces, keys in any case, the FIRST
  occurrence of a key, names in any case with aliases (TAP, SWIPE, FINISH...), points as
  ``x,y``, ``[x,y]`` or a box (centre), and rejects points off the grid.

On a static decision screen a click is the decision and other actions leave the screen as it
is; in a simulated app every action acts, up to ``max_steps``. Prompt templates: role
``decision``, whose ``{{screenshot}}`` marks where the image goes (``prompt_roles``).
"""

from ._codec import (
    GRID,
    THINK_CLOSE,
    GelabCodec,
    GelabReply,
    action_fields,
    read_faithful,
    read_robust,
    summary_faithful,
    write,
)
from ._loop import JPEG_QUALITY, GelabAdapter

__all__ = [
    "GRID",
    "JPEG_QUALITY",
    "THINK_CLOSE",
    "GelabAdapter",
    "GelabCodec",
    "GelabReply",
    "action_fields",
    "read_faithful",
    "read_robust",
    "summary_faithful",
    "write",
]
