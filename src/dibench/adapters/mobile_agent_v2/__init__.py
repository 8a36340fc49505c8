"""Mobile-Agent-v2 (X-PLUG/MobileAgent): perception list, planning/decision/reflection roles.

Protocol, as in Mobile-Agent-v2's ``run.py``:
- perception: OCR text blocks and icons with centre coordinates (``_perception``);
- decision: the screenshot plus ``### Background / Screenshot information / Keyboard status /
  History operations / Progress / Last operation / Response requirements / Output format``
  sections; the reply has ``### Thought ###``, ``### Action ###`` (one of ``Open app (name)``,
  ``Tap (x, y)``, ``Swipe (x1, y1), (x2, y2)``, ``Type (text)``, ``Home``, ``Stop``) and
  ``### Operation ###``; the action is found by its keyword and its numbers;
- reflection (after an action): both screenshots and their perception lists, answer A (as
  expected), B (wrong page) or C (no change); B and C set the "Last operation" warning;
- planning (after a successful action): rewrites ``### Completed contents ###``.

Here the fixed context steps are the history operations, so planning runs first when there is
context (planning -> decision -> reflection). Every decision looks at the current screen and its
own perception list; reflection compares the screens (and perception lists) before and after
the action; B ("wrong page") presses Back, as the original does. On a static decision screen a
tap is the decision and nothing else changes the screen, so before and after are the same. The
memory unit (a follow-up turn after each decision that keeps "important content" for later
screens) runs in simulated apps only (``memory``; it is off-path on a single decision screen).

Replies are read in one of two modes. ``faithful`` (the default) reads them as ``run.py`` does:
the action is the text after the LAST ``### Action ###`` (anywhere, even mid-line; the whole
reply when there is none) up to the next ``### Operation ###``; the keywords ``Open app``,
``Tap``, ``Swipe``, ``Type``, ``Back``, ``Home``, ``Stop`` are tested in that order as
case-sensitive substrings; coordinates are the text inside the last ``(``...``)`` split on
``", "`` and converted with ``int()``, so a float, a missing number or ``(540,1206)`` crashes the
original (-> ``FRAMEWORK_ERROR``); no keyword at all does nothing and the loop goes on (the step
is spent, reflection still runs). ``Open app (name)`` taps just above the OCR line whose text is
exactly ``name``, as the original does. A reflection is A, B or C by the first of those capital
letters found anywhere after the last ``### Answer ###`` (none of them: nothing changes).
``robust`` is the tolerant reader (``parse_v2_action``, ``parse_v2_reflection``).

Pipeline, as the original: every screenshot goes out as JPEG at Pillow's default quality (75; it
converts the adb PNG with ``Image.save(path, "JPEG")`` and sends that file) and the perception
(OCR) reads the decoded JPEG; the default hint restates the original's default ``add_info``; at
most 2048 tokens per reply.
"""

from ._loop import DEFAULT_HINT, JPEG_QUALITY, MobileAgentV2Adapter
from ._parse import (
    V2Action,
    parse_v2_action,
    parse_v2_reflection,
    read_v2_action,
    read_v2_completed,
    read_v2_memory,
    read_v2_verdict,
)

__all__ = [
    "DEFAULT_HINT",
    "JPEG_QUALITY",
    "MobileAgentV2Adapter",
    "V2Action",
    "parse_v2_action",
    "parse_v2_reflection",
    "read_v2_action",
    "read_v2_completed",
    "read_v2_memory",
    "read_v2_verdict",
]
