"""Gemini computer use (Google's ``computer_use`` tool, run as Tongyi-MAI/MobileWorld's
``gemini_cua`` agent runs it on Android) driving a phone: ``functionCall`` parts through
``generateContent``.

Protocol, as Google's computer-use docs, google/computer-use-preview's loop and MobileWorld
have it:
- tools: ``environment=mobile`` (default, MobileWorld's): ``computer_use`` with
  ``ENVIRONMENT_MOBILE`` (the model's own phone functions) and
  ``enable_prompt_injection_detection`` (``injection_detection``, on by default as there), and
  the functions ``answer`` and ``done``; ``environment=browser`` (Google's phone example for
  models without a mobile environment): ``ENVIRONMENT_BROWSER`` with the browser-only
  functions excluded (``open_web_browser``, ``search``, ``navigate``, ``hover_at``,
  ``scroll_document``, ``go_forward``, ``key_combination``, ``drag_and_drop``) and
  ``open_app``, ``long_press_at`` and ``go_home`` declared;
- the screenshot is sent at ``area`` (default 3/4, MobileWorld's) of the screen's area, each
  side times sqrt(area), truncated (1080x2340 -> 935x2026, 1440x3200 -> 1247x2771); Google
  gives no size for a phone, and the grid makes the model's points size-free;
- points are on a 0-999 grid, mapped to the full screen as MobileWorld does:
  ``max(0, min(int(v / 1000 * side), side - 1))`` (truncated; 999 is the last pixel row or
  column); a value outside 0-999 (or not a number) fails the call;
- one conversation grows over the task: our system prompt (the API adds its own for the
  tool), the task with the first screenshot, then each model turn as it came (text and
  ``functionCall`` parts) and a user turn with one ``functionResponse`` of the same name per
  call, in order, each carrying the screenshot after that call (no ``url``: a phone has
  none); only the ``images`` (default 3) most recent such turns keep their screenshots, as
  the reference loop does;
- a reply's calls run in order; one that fails (an unknown function, a point off the grid, a
  malformed argument) is answered with an error and every later call of the reply ``Not
  executed: ...``; the loop goes on (the reference loop stops on an error);
- a call whose ``safety_decision`` is ``require_confirmation`` is a confirmation request
  stored on the row: ``confirm=decline`` (default) ends the run there with no pick, as a
  careful user would; ``accept`` runs it and its response carries
  ``safety_acknowledgement: "true"``;
- on the phone: the clicks tap, a long press holds, ``scroll_document`` / ``scroll_at`` /
  ``scroll`` swipe the finger the other way (from the point, the centre by default),
  ``drag_and_drop`` / ``swipe`` swipe towards the end point, ``type_text_at`` types (then
  presses enter unless ``press_enter`` is false; its point is not tapped, as in MobileWorld),
  ``go_back`` / ``go_home`` and the Back / Home / Enter keys press them; ``open_app``, the
  browser's own functions and ``wait_5_seconds`` leave the phone as it is;
- a reply without a function call ends the run: its text is a hand-back to the user (⊥
  asked_user), as is an ``answer`` call; ``done`` ends it with no pick; a reply with neither
  text nor a call (a malformed call) is asked again, as the reference loop does.

On a static decision screen a tap is the decision and other actions leave the screen as it
is; in a simulated app every action acts, up to ``max_steps`` replies.
"""

from ._codec import GeminiCUCodec
from ._loop import GeminiCUAdapter, keep_recent_screenshots
from ._protocol import (
    CONFIRMATION,
    ENVIRONMENTS,
    EXCLUDED,
    GRID,
    NOT_EXECUTED,
    declarations,
    denorm,
    read_call,
    shown_size,
    tool_reply,
)

__all__ = [
    "CONFIRMATION",
    "ENVIRONMENTS",
    "EXCLUDED",
    "GRID",
    "NOT_EXECUTED",
    "GeminiCUAdapter",
    "GeminiCUCodec",
    "declarations",
    "denorm",
    "keep_recent_screenshots",
    "read_call",
    "shown_size",
    "tool_reply",
]
