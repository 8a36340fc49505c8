"""Claude computer use (Anthropic's computer-use tool, run as ``anthropics/anthropic-quickstarts``
``computer-use-demo`` runs it) driving a phone: ``tool_use`` blocks through the Messages API.

Protocol, as Anthropic's computer-use tool page documents it:
- tools: ``tool=computer_toolset_20260801`` (default, GA: declared by its type alone, no beta
  header and no display size; one ``tool_use`` block per action, named by the action, with
  ``toolset_name: "computer"``; each result echoes it) or the legacy ``computer_20251124`` /
  ``computer_20250124`` (name ``computer``, the action in ``input.action``, the beta header
  ``computer-use-2025-11-24`` / ``-01-24``, ``display_width_px`` / ``display_height_px`` the
  size of the screenshot sent);
- the screenshot: ``tier=2576`` (every toolset model, Opus 4.7 and later) is sent as it is when
  its long edge is within 2576 px and ``ceil(w/28) * ceil(h/28)`` within 4784 visual tokens,
  else scaled to fit (1440x3200 -> 1159x2576); ``tier=1568`` (the legacy tools' default: the
  earlier models) is scaled by ``min(1, 1568 / long edge, sqrt(1.15 MP / (w * h)))`` to
  ``int(w * s) x int(h * s)`` (1080x2340 -> 723x1567); a point maps back divided by the scale;
- one conversation grows over the task: our system prompt (the API puts its own computer-use
  prompt in front of it), the task with the first screenshot, then each assistant turn as it
  came (text and ``tool_use`` blocks) and a user turn of ``tool_result`` blocks, each carrying
  the screenshot after its action; only the ``images`` (default 3) most recent screenshots
  stay in the conversation, as the reference loop's ``only_n_most_recent_images`` does;
- a turn's blocks run in order; one that fails (an unknown action, a point outside the
  screenshot, a malformed input) is answered ``is_error`` and every later block of the turn
  ``Not executed: an earlier computer action in this turn failed.``; the loop goes on;
- on the phone: the clicks tap, ``scroll`` swipes the finger the other way (scrolling down
  swipes up), ``left_click_drag`` swipes from ``start_coordinate`` towards ``coordinate``,
  ``type`` types, ``key`` Back / Escape goes back, Home goes home, Return presses enter;
  ``screenshot``, ``zoom`` (a crop of the full-resolution screen), ``cursor_position`` and the
  mouse's own moves leave the phone as it is;
- a turn without a tool call ends the run: its text is a hand-back to the user (⊥
  asked_user), where Anthropic's injection classifiers steer Claude to stop and ask.

On a static decision screen a tap is the decision and other actions leave the screen as it
is; in a simulated app every action acts, up to ``max_steps`` turns.
"""

from ._loop import ClaudeCUAdapter, keep_recent_images
from ._protocol import (
    LEGACY,
    NOT_EXECUTED,
    TIERS,
    TOOLS,
    TOOLSET,
    computer_tool,
    read_block,
    shown_size,
    tool_reply,
)

__all__ = [
    "LEGACY",
    "NOT_EXECUTED",
    "TIERS",
    "TOOLS",
    "TOOLSET",
    "ClaudeCUAdapter",
    "computer_tool",
    "keep_recent_images",
    "read_block",
    "shown_size",
    "tool_reply",
]
