"""Mobile-Agent-v3 (X-PLUG/MobileAgent): manager -> operator -> reflector -> notetaker, on GUI-Owl.

The framework's Android loop (``MobileAgentV3_M3A.step`` in ``mobile_agent_v3.py`` and the roles
in ``mobile_agent_v3_agent.py``), one round per step:

- manager (current screenshot): a first plan (``### Thought ###``, ``### Plan ###``), later an
  update (``### Thought ###``, ``### Historical Operations ###`` with the subgoals done so far,
  ``### Plan ###``) given the last action, its description, the notes and, after two failed
  actions in a row, the log of those failures ("potentially stuck"). A plan that says
  "Finished" and is shorter than 15 characters ends the task. The manager is skipped (the
  operator simply tries again) right after an action the operator wrote invalidly;
- operator (the ``Executor``; current screenshot): the plan, its first subgoals, the progress
  (the manager's historical operations) and the last five actions with their outcomes; answers
  ``### Thought ###``, ``### Action ###`` holding one JSON action in GUI-Owl's vocabulary
  (``{"action": "click", "coordinate": [x, y]}``, ``long_press``, ``swipe`` with
  ``coordinate2``, ``type``, ``system_button`` Back/Home/Enter, ``open_app``, ``answer``,
  ``terminate``), and ``### Description ###``. Coordinates are pixels of the screenshot as the
  model was shown it: resized by ``smart_resize`` (sides multiples of 28);
- reflector (screenshots before and after the action): ``### Outcome ###`` A (as expected),
  B (wrong page) or C (no change) and ``### Error Description ###``; skipped after ``answer``;
- notetaker (the screenshot after a successful action): ``### Important Notes ###``.

Every call is one user message, text first, then the image(s), with no system prompt (ours
sends one only to carry a defense's prefix or a ``ROLE.system.txt`` template). Replies are read
in one of two modes. ``faithful`` reads each section as the original does: the text after the
LAST ``### Action`` (anywhere, even mid-line) up to the next ``### Description``, newlines
turned into spaces, then ``json.loads`` of the whole section; a section that is not exactly one
JSON object, lacks a field, names an unknown action (names are case-sensitive) or comes without
a thought is an invalid action: the original does nothing, records outcome C and asks the
operator again (here the step is spent; a run that ends on such a reply ends ``parse_error``);
coordinates go through ``int()`` when the action is executed, where a value ``int()`` cannot
read crashes the original's loop (``framework_error``), as does a reflector outcome holding no
A, B or C. ``robust`` is tolerant: markdown, fences, case, aliases, coordinates written as
strings or floats, one JSON object found anywhere in the Action section (else the reply).

On a static decision screen a tap is the decision and nothing else changes the screen; in a
simulated app every action acts and the notetaker runs after each successful action, up to
``max_steps`` operator calls.
"""

from ._loop import MobileAgentV3Adapter
from ._parse import (
    InvalidAction,
    V3Operation,
    V3Plan,
    parse_v3_manager,
    parse_v3_notes,
    parse_v3_operator,
    parse_v3_reflection,
)

__all__ = [
    "InvalidAction",
    "MobileAgentV3Adapter",
    "V3Operation",
    "V3Plan",
    "parse_v3_manager",
    "parse_v3_notes",
    "parse_v3_operator",
    "parse_v3_reflection",
]
