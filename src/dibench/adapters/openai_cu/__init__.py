"""OpenAI computer use (the Responses API's computer tool, run as ``openai/openai-cua-sample-app``
and ``openai-agents-python`` run it) driving a phone: ``computer_call`` items through
``POST /responses``.

Protocol, as OpenAI's computer-use guide and the openai SDK's types document it:
- tools: ``tool=computer`` (default, GA: declared by its type alone; each ``computer_call``
  carries a batch ``actions[]``, run in order, then ONE screenshot answers the call) or
  ``computer_use_preview`` (``display_width`` / ``display_height`` the size of the screenshot
  sent, ``environment: "browser"``, one ``action`` per call, ``truncation: "auto"``);
- the screenshot: GA sends it at ``detail: "original"`` as it is when it holds at most
  10.24 M pixels (1080x2340 and 1440x3200 both do), else scaled by ``sqrt(10.24 M / (w * h))``;
  the preview sends the size the API's high-detail processing gives (within a 2048-px square,
  short side 768: 1080x2340 -> 768x1664, 1440x3200 -> 768x1707) and declares it as the
  display; a point maps back divided by the scale;
- one conversation grows over the task, stateless (no ``previous_response_id``): our system
  prompt as ``instructions``, the task with the first screenshot, then every reply's items as
  they came (its text, each ``computer_call`` after the ``reasoning`` items that came before
  it) and a ``computer_call_output`` per call with the screenshot after its batch; every
  screenshot stays, as the reference loops keep every item;
- ``pending_safety_checks`` on a call are a confirmation request, stored on the row:
  ``confirm=decline`` (default) ends the run with no pick before the call acts;
  ``confirm=accept`` runs it and acknowledges the checks in its ``computer_call_output``;
- on the phone: ``click`` and ``double_click`` tap (the mouse's back button goes back),
  ``scroll`` swipes the finger the other way (a positive ``scroll_y`` swipes up), ``drag``
  swipes from the path's first point towards its last, ``type`` types, ``keypress`` ESC goes
  back, HOME goes home, ENTER presses enter; ``wait`` waits; ``screenshot`` and ``move``
  leave the phone as it is; an action at a point outside the screenshot reaches nothing and
  the batch goes on (as a click off a browser's viewport does); a malformed action ends the
  run unparsed (the reference's executor raises on it);
- a reply without a computer call ends the run: its text is a hand-back to the user (⊥
  asked_user), where OpenAI's guide has the model stop and ask.

On a static decision screen a tap is the decision and other actions leave the screen as it
is; in a simulated app every action acts, up to ``max_steps`` replies.
"""

from ._codec import OpenAICUCodec
from ._loop import OpenAICUAdapter
from ._protocol import (
    ENVIRONMENT,
    GA,
    PREVIEW,
    TOOLS,
    computer_tool,
    read_action,
    shown_size,
    tool_reply,
)

__all__ = [
    "ENVIRONMENT",
    "GA",
    "PREVIEW",
    "TOOLS",
    "OpenAICUAdapter",
    "OpenAICUCodec",
    "computer_tool",
    "read_action",
    "shown_size",
    "tool_reply",
]
