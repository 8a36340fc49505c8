"""AutoGLM (zai-org/Open-AutoGLM, ``phone_agent/``): Zhipu's phone agent, one call a step.

Protocol, as in the original's agent loop (``agent.py``), client (``model/client.py``) and
action handler (``actions/handler.py``):
- the screenshot is sent as it is, full size, as PNG (``data:image/png;base64``); the client
  does no resizing (the deployment's vLLM processor caps it at 5,000,000 pixels, above a
  1440x3200 phone);
- one conversation grows over the task: the system prompt; the first user turn holds the
  image, then the task and a JSON line ``{"current_app": ...}``; later user turns the image,
  then a short header and that line; once a turn is answered its image is removed, so only
  the current screenshot is ever sent; each assistant turn stores
  ``<think>{thinking}</think><answer>{action}</answer>`` as the client split the reply. The
  app name is ``"System Home"`` here, what the original reports for any package outside its
  app table;
- sampling: temperature 0.0, max_tokens 3000 (top_p 0.85 and frequency_penalty 0.2 in the
  original are not part of a DIBench request);
- actions: ``do(action="Tap", element=[x,y])`` (with ``message=...``: a sensitive tap the user
  must confirm first), Double Tap (a tap here), Long Press, Swipe (start, end), Type /
  Type_Name, Back, Home, Wait, Launch / Note / Call_API (no effect here), Interact and
  Take_over (hand the task to the user: ⊥ asked_user; the original's Interact handler only
  returns "User interaction required" and its loop goes on, its Take_over blocks on the
  console until the person is done), ``finish(message=...)``;
- points are on a 0-1000 grid (the prompt says 0-999): the handler maps them with
  ``int(v / 1000 * side)`` on the full screenshot, first two values only (a box's first
  corner); an off-screen point is tapped.

Replies are read in one of two modes (``parse=``):
- ``faithful`` (default) reads them as the original does: ``finish(message=`` anywhere wins
  over ``do(action=``; the first occurrence of the winning marker starts the action, which
  runs to the end of the reply; a Type is cut by position, a finish message loses its first
  character and its last two, any other ``do`` must parse as one Python call with literal
  values, so a closing ``</answer>``, a fence, a second call, trailing prose or a truncation
  makes the original finish the task with the text as message (⊥ parse_error here, the step
  recorded as a finish); names are exact; a refused action (unknown name, missing or bad
  point) does nothing and the loop goes on;
- ``robust`` takes the model's own call (in ``<answer>`` outside the thinking, the last one
  that opens a line), tolerates tags, fences, quotes, truncation, case and spacing of
  names, string and box points (centre), and rejects off-grid points and unknown names.

``confirm="accept"`` (default) or ``"decline"`` is what the simulated user answers a
sensitive tap: declined, the original ends the task ("User cancelled sensitive operation"),
here ⊥ no_commit with cause DECLINED. Prompt templates: roles ``decision`` (the first turn,
and the system prompt) and ``next`` (later turns) (``prompt_roles``).
"""

from ._loop import CURRENT_APP, AutoGLMAdapter
from ._parse import (
    GRID,
    REFUSED_BY_HANDLER,
    Call,
    read_call_faithful,
    read_call_robust,
    split_reply,
)

__all__ = [
    "CURRENT_APP",
    "GRID",
    "REFUSED_BY_HANDLER",
    "AutoGLMAdapter",
    "Call",
    "read_call_faithful",
    "read_call_robust",
    "split_reply",
]
