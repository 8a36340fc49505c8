"""AppAgent (TencentQQGYLab/AppAgent): a tagged screenshot and ``tap(n)``-style calls.

Protocol, as in AppAgent's task executor (without its optional UI documentation):
- the screenshot gets numeric tags on the clickable and focusable elements (``_annotate``),
  each drawn with its top-left corner at the element's centre;
- one call per round, a single user message (no system role: a defense's system prefix goes
  in front of the user text) holding the prompt and the image, at most 300 tokens back; the
  prompt gives the functions ``tap(element)``, ``text("...")``, ``long_press(element)``,
  ``swipe(element, "dir", "dist")`` and ``grid()``, the task, and a one-line summary of past
  actions; the model answers ``Observation: / Thought: / Action: / Summary:`` lines and the
  Action holds one call or FINISH;
- ``grid()`` switches the next round to a numbered grid with ``tap(area, "subarea")``;
- the Summary becomes the past-actions line of the next round.

Replies are read in one of two modes. ``faithful`` (the default) reads them as AppAgent's
``parse_explore_rsp`` / ``parse_grid_rsp`` and its task executor do: each field is the text
after the first ``Name: `` anywhere in the reply (mid-line too, so an Observation that quotes
``Action: tap(2)`` makes that quoted call the action), all four fields must be there,
``FINISH`` anywhere in the Action wins, the function name is the Action text before its first
``(`` (exact and case-sensitive), arguments go through ``int()``, a tag indexes the tag list
Python-style (``tap(0)`` is the last tag, one past the end crashes), and wherever the original
returns ERROR, crashes or stops (an unknown function, a float tag, a bad swipe direction) the
run ends with ``FRAMEWORK_ERROR``. ``robust`` is the tolerant reader ``parse_appagent_reply``.

Here the fixed context steps seed the past-actions line and a tag maps to its UI node. Each
round looks at the current screen: tags are recomputed from that screen's UI, the grid from its
size. On a static decision screen a tap on a candidate (its node, or a grid point in its box)
is the decision and anything else leaves the screen as it is; in a simulated app every call
acts on the phone (a tap opens a page, a swipe scrolls, the app's own back arrow goes back),
up to ``max_steps`` rounds.
"""

from ._annotate import Grid, label_elements
from ._loop import AppAgentAdapter
from ._parse import AppAgentReply, parse_appagent_faithful, parse_appagent_reply

__all__ = [
    "AppAgentAdapter",
    "AppAgentReply",
    "Grid",
    "label_elements",
    "parse_appagent_faithful",
    "parse_appagent_reply",
]
