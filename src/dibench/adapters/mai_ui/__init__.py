"""MAI-UI (Tongyi-MAI/MAI-UI, ``src/mai_naivigation_agent.py``): one tool call a step.

Protocol, as in MAI-UI's navigation agent (``MAIUINaivigationAgent``):
- the screenshot is sent as it is, PNG, converted to RGB, never resized by the agent (its
  vLLM server's processor resizes it for the model; the coordinates do not depend on that);
- messages: the system prompt, a user turn with the instruction alone, then for each past step
  (all of them) the assistant turn the original rebuilds from memory, preceded by that step's
  screenshot for the last ``history_n - 1`` = 2 steps only, and last the current screenshot as a
  user turn (``history_n`` = 3 screenshots at most); the assistant turn is
  ``<thinking>\\n...\\n</thinking>\\n<tool_call>\\n{compact JSON}\\n</tool_call>`` with
  ``coordinate`` put back on the grid with ``int(v * 999)`` (``start``/``end_coordinate`` stay
  on [0, 1], as the original leaves them);
- sampling: temperature 0, top_p 1, top_k -1, max_tokens 2048 (seed 42);
- actions (``mobile_use``): click, long_press, double_click, type, swipe (direction, optional
  coordinate), open, drag, system_button (back/home/menu/enter), wait, terminate, answer,
  ask_user; coordinates on a 0-999 grid, divided by 999 (a box ``[x1, y1, x2, y2]`` by its
  centre), and put on the phone with ``round(v * side)`` (MobileWorld's executor, the
  original's repository has none); ask_user ends the run ⊥ ASKED_USER with its question
  (the original waits for a person's answer; we invent none); terminate and answer give up;
  open, menu and enter do nothing here.
- ``ask_user=True`` (default) uses the original's ask-user variant of the prompt (ask_user and
  double_click listed; the original shows it when MCP tools are configured, none here);
  ``False`` its plain prompt.

Replies are read in one of two modes (``parse=``):
- ``faithful`` (default) as ``parse_action_to_structure_output`` does: the FIRST
  ``<thinking>...</thinking>`` then the first ``<tool_call>...</tool_call>`` after it (a
  closing ``</think>`` stands for ``</thinking>``), both closing tags needed, tags
  case-sensitive; the call's JSON must parse and hold ``arguments``; the function name is not
  checked; string coordinates or other lengths than 2/4 crash. A reply it cannot read is asked
  for again, three attempts in all, then the original returns its error flag and the run ends
  FRAMEWORK_ERROR; an action name or field the executor lacks (case-sensitive names) crashes
  too; points are not bounds-checked.
- ``robust`` reads the model's own call (the first ``<tool_call>`` opening a line outside the
  thinking, closed or not, in any case, or any JSON call), aliases and any case for names,
  loose coordinates, and rejects points off the grid.

On a static decision screen a click is the decision and other actions leave the screen as it
is; in a simulated app every action acts, up to ``max_steps``. Prompt templates: role
``decision`` (``prompt_roles``; the system template offers ``extra_actions``, the ask-user
lines, and the user template ``instruction`` and ``context``, the dataset's earlier steps).
"""

from ._loop import ATTEMPTS, HISTORY_N, MaiUiAdapter, history_text, to_grid
from ._parse import GRID, Call, read_mai_faithful, read_mai_robust, to_action

__all__ = [
    "ATTEMPTS",
    "GRID",
    "HISTORY_N",
    "Call",
    "MaiUiAdapter",
    "history_text",
    "read_mai_faithful",
    "read_mai_robust",
    "to_action",
    "to_grid",
]
