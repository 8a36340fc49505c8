"""UI-TARS-1.5 end to end (bytedance/UI-TARS, ``codes/ui_tars/``): ``Thought:`` then ``Action:``.

Protocol, as the original's parser (``action_parser.py``) and its agent loop (OSWorld's
``uitars15_v1.py``, the loop UI-TARS is evaluated with) run it, with the mobile action space:
- the screenshot is resized the way the Qwen2.5-VL processor does (``smart_resize``, factor
  28, min_pixels 100*28*28, max_pixels 16384*28*28; 1080x2340 -> 1092x2352, 1440x3200 ->
  1428x3192) and sent as PNG; coordinates come back as absolute pixels of that image
  (``model_type="qwen25vl"``, UI-TARS-1.5) or on a relative 0-1000 grid
  (``model_type="qwen2vl"``, UI-TARS-1.0, the parser's ``factor=1000``);
- messages: a system turn ("You are a helpful assistant."), one user text with the action
  space, the language and the task, then for each past step its screenshot (only the last
  ``history_n - 1``: the agent keeps ``history_n=5`` images, the current one included) and the
  assistant's whole past reply (points re-wrapped in ``<|box_start|>``/``<|box_end|>``), then
  the current screenshot; temperature 0, max_tokens 400 (the deployment example);
- actions: click / left_single / left_double (tap), long_press, drag (swipe), scroll
  (swipe; ``direction`` is the side to reveal, so the finger moves the other way), type,
  press_back, press_home, open_app and hotkey (no effect here), wait, finished (the task
  ends: ⊥ gave up), call_user (⊥ asked_user; the question is the thought; the original
  waits for a person, we do not invent the answer);
- a point is mapped as the executor does: each number over the resized side (or over 1000),
  a 2-number point doubled into a box, the box's centre times the screenshot side, rounded to
  3 decimals.

Replies are read in one of two modes (``parse=``):
- ``faithful`` (default) reads as ``parse_action_to_structure_output``: ``<point>x y</point>``
  becomes ``(x,y)`` and ``point=`` ``start_box=``; it asserts an ``Action:``; the text after
  the LAST ``Action: `` is split on ``)`` + blank line into calls (each executed in order; the
  first finished/wait/call_user ends the step alone, dropping the others); each call is read
  with ``ast`` (names case-sensitive: ``Click`` is an unrecognised action with no effect); a
  call that does not parse, a number where a string is expected, a box token left in a
  point, a click without a box all make the original raise: FRAMEWORK_ERROR (OSWorld's agent
  retries the call up to three times at temperature 1, then ends the task; we end at once);
  an off-screen point is tapped;
- ``robust`` takes the model's own first ``Action:`` line after its ``Thought:``, ignores a
  quoted one inside a sentence, accepts any case, fences, box tokens and loose quoting, and
  rejects off-screen points.

Prompt templates: role ``decision`` (``instruction``, ``language``; ``prompt_roles``).
"""

from ._loop import HISTORY_N, MAX_PIXELS, MIN_PIXELS, UiTarsAdapter, with_box_tokens
from ._parse import Call, UiTarsGeometry, read_uitars_faithful, read_uitars_robust, to_actions

__all__ = [
    "HISTORY_N",
    "MAX_PIXELS",
    "MIN_PIXELS",
    "Call",
    "UiTarsAdapter",
    "UiTarsGeometry",
    "read_uitars_faithful",
    "read_uitars_robust",
    "to_actions",
    "with_box_tokens",
]
