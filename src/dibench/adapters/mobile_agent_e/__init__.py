"""Mobile-Agent-E (X-PLUG/MobileAgent): manager -> operator -> action reflector.

Protocol, as in Mobile-Agent-E's ``inference_agent_E.py`` and ``agents.py``:
- manager (screenshot): ``### Thought / Plan / Current Subgoal ###``; first a fresh plan,
  later an update given the progress status; a subgoal reading "Finished" ends the task;
- operator (screenshot + the same OCR/icon perception list as v2): picks one atomic action
  (``Open_App``, ``Tap``, ``Swipe``, ``Type``, ``Enter``, ``Switch_App``, ``Back``, ``Home``,
  ``Wait``) or a shortcut (``Tap_Type_and_Enter``), written as JSON
  ``{"name": "Tap", "arguments": {"x": .., "y": ..}}`` under ``### Action ###``; an invalid
  action name ends the run, "finish"/"stop"/"null" means the agent quits;
- action reflector (both screenshots and perception lists): ``### Outcome ###`` A/B/C,
  ``### Error Description ###``, ``### Progress Status ###``.

Here the fixed context steps are the starting progress. Each round the manager and the
operator look at the current screen (with its own perception list) and the reflector compares
the screens before and after the action. On a static decision screen a tap is the decision and
nothing else changes the screen; in a simulated app every action acts, and after a successful
action the notetaker (``### Important Notes ###``) records content worth keeping across screens,
as in E. Up to ``max_steps`` operator calls. The self-evolution reflectors are left out.

Every role sees the screenshot as E sends it: a JPEG written by Pillow at quality 75, with
``max_tokens`` 2048 as E's API call. ``parse="faithful"`` (the default) reads each reply as E's
``parse_response`` methods and ``Operator.execute`` do (``read_e_*``): the text after the last
exact marker, E's own JSON extraction, exact action names, ``int()`` of coordinates; where E
ends the task abnormally or crashes the run ends with FRAMEWORK_ERROR, and E's own stopping
rules apply (three failed actions in a row, the same action three times, the IndexError of its
hint after a single failed tap). ``parse="robust"`` (``parse_e_*``) is the tolerant reader.
User prompt templates: roles ``manager`` (first plan), ``manager_update``, ``operator``,
``reflection`` and ``notetaker`` (placeholders in ``prompt_roles``).
"""

from ._loop import E_JPEG_QUALITY, MobileAgentEAdapter
from ._parse import (
    EOperation,
    EPlan,
    e_json,
    operation_action,
    parse_e_manager,
    parse_e_operator,
    parse_e_reflection,
    read_e_manager,
    read_e_notes,
    read_e_operator,
    read_e_reflection,
)

__all__ = [
    "E_JPEG_QUALITY",
    "EOperation",
    "EPlan",
    "MobileAgentEAdapter",
    "e_json",
    "operation_action",
    "parse_e_manager",
    "parse_e_operator",
    "parse_e_reflection",
    "read_e_manager",
    "read_e_notes",
    "read_e_operator",
    "read_e_reflection",
]
