"""Qwen3-VL's own mobile format (QwenLM/Qwen3-VL cookbook ``mobile_agent.ipynb``, run on Android
as Tongyi-MAI/MobileWorld's ``Qwen3VLAgentMCP`` does): one ``mobile_use`` tool call a step.

Protocol, as in the cookbook and MobileWorld (``agents/implementations/qwen3vl.py``):
- the screenshot is sent as it is, full size, as a base64 PNG (MobileWorld's
  ``pil_to_base64``; the cookbook sends the file's own bytes): no resize on the client. The
  model server resizes it with Qwen3-VL's processor (``smart_resize``, factor 32 = patch 16 x
  merge 2), which the model sees but the agent never uses: coordinates are on a grid;
- the system message declares one function, ``mobile_use``, inside ``<tools></tools>`` in the
  Qwen function-calling layout, states the screen as 999x999 and asks for ``Thought:`` (one
  sentence), ``Action:`` (one short command), then one ``<tool_call>{json}</tool_call>``; the
  user turn gives the query, the task progress (``Step 1: <action line>; ...``) and the
  current screenshot only (no past screenshots, no past assistant turns);
- actions: click, long_press, swipe, type, answer, system_button (Back/Home/Menu/Enter), wait,
  terminate (success/failure). Qwen3-VL's own tool (``tool="qwen"``, default) has NO ask-user
  action: an offline agent's ``ask`` move is written as its give-up (terminate failure).
  ``tool="mobileworld"`` adds MobileWorld's ``ask_user`` (question in ``text``), which hands the
  choice back and ends the episode ⊥ asked_user (MobileWorld's simulated user answers and the
  loop goes on; we do not invent an answer);
- coordinates: 0-999 grid, mapped back as ``round(v / 999 * side)`` (the cookbook's
  ``rescale_coordinates``; MobileWorld divides by ``SCALE_FACTOR = 999`` then multiplies,
  Python's half-to-even ``round``); MobileWorld takes a 4-number box's centre;
- sampling: temperature 0.0 (MobileWorld's ``runtime_conf``), no max_tokens sent.

Replies are read in one of two modes (``parse=``):
- ``faithful`` (default) reads them as MobileWorld's ``parse_action_to_structure_output`` and
  executor do: the text after the FIRST ``Thought:`` is cut at its first ``Action:``, and the
  first ``<tool_call>`` after that, up to ``</tool_call>``, is ``json.loads``-ed; a reply it
  cannot cut or load (no ``Thought:``, a second ``Action:`` before the call, bad JSON, a
  coordinate of 3 numbers or strings) is asked again with the same messages, 3 times; the
  original then asks forever, we end FRAMEWORK_ERROR. A call its executor cannot map (a click
  without coordinate, a swipe without its end, a Menu or lower-case button, another function
  name) aborts the task: FRAMEWORK_ERROR. An unknown action name (``tap``, ``Click``) becomes
  an empty action the device refuses: no effect, the loop goes on. Names are case-sensitive;
  an off-screen point is tapped;
- ``reader="cookbook"`` makes ``faithful`` read as the Qwen3-VL cookbook's own cell does
  instead: the call between the first ``<tool_call>`` + newline and the next newline +
  ``</tool_call>`` (no Thought/Action lines needed; one-line calls and CRLF fail), the name never
  read, a click's first two numbers rescaled (a box's first corner); other actions go to
  MobileWorld's executor, and a reply the cell cannot read is a crash (no retry);
- ``robust`` is the tolerant reader (the last ``<tool_call>`` opening a line, bare JSON,
  case-insensitive names, loose coordinates, boxes, off-grid points rejected).

On a static decision screen a click is the decision and other actions leave the screen as it
is; in a simulated app every action acts, up to ``max_steps``. Prompt templates: role
``decision`` (``prompt_roles``).
"""

from ._loop import READERS, RETRIES, TOOLS, QwenVLAdapter, mobile_use_tool
from ._parse import (
    GRID,
    QwenCall,
    RetryReply,
    map_faithful,
    read_qwen_cookbook,
    read_qwen_faithful,
    read_qwen_robust,
)

__all__ = [
    "GRID",
    "READERS",
    "RETRIES",
    "TOOLS",
    "QwenCall",
    "QwenVLAdapter",
    "RetryReply",
    "map_faithful",
    "mobile_use_tool",
    "read_qwen_cookbook",
    "read_qwen_faithful",
    "read_qwen_robust",
]
