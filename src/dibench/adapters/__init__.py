"""Agent adapters: how each framework shows a decision screen to a model and reads its action.

Built-ins, registered in ``ADAPTERS`` by name (options are keyword arguments of the class):
``appagent`` (tagged screenshot, ``tap(n)``), ``mobile-agent-v2`` (OCR/icon perception,
planning/decision/reflection, ``Tap (x, y)``), ``mobile-agent-e`` (manager/operator/reflector,
JSON atomic actions), ``mobile-agent-v3`` (the Mobile-Agent-v3 framework: a manager, an
operator writing GUI-Owl's JSON actions on a Qwen-resized screenshot, a reflector and a
notetaker), ``gui-owl`` (GUI-Owl alone, end to end: ``mobile_use`` tool calls on a
Qwen-resized screenshot), ``mai-ui`` (MAI-UI's navigation agent: ``mobile_use`` tool calls
on a 0-999 grid), ``ui-tars`` (UI-TARS-1.5: ``Thought:`` / ``Action: click(start_box=...)`` on
a Qwen-resized screenshot), ``autoglm`` (Open-AutoGLM's phone agent: ``do(action=...)`` on a
0-1000 grid, full-size PNG), ``qwen-vl`` (Qwen3-VL's own mobile format: ``mobile_use`` tool
calls on a 0-999 grid, read as MobileWorld does), ``claude-cu`` (Claude's computer-use tool through
the Messages API: ``tool_use`` blocks, the documented screenshot scaling) and ``direct`` (a
multiple-choice baseline).

Every adapter runs its framework's loop over an ``Environment``: ``decide(inp, provider)`` on
one dataset decision screen (a ``StaticScreen``), ``run_episode(env, provider, ...)`` over an
interactive simulated app (``dibench.sim``).

Each framework is a sub-package (``appagent/``, ``mobile_agent_v2/``, ...): ``prompts/`` (its
packaged wording, ``ROLE.txt`` / ``ROLE.system.txt`` as ``prompts=DIR`` expects), ``_parse.py``
(its readers, faithful and robust) and ``_loop.py`` (its roles in order); importing it
registers it. What they share lives here: ``_base`` (the values), ``_env`` (environments),
``_adapter`` (the interface and registry), ``_episode`` (one episode's book-keeping),
``_images`` (what a model is shown), ``_moves`` (offline agents' decisions), ``_parse`` and
``_replies`` (reading replies), ``_prompts`` (the template loader), ``_perception`` (v2's and
E's OCR list) and ``_pool`` (E's and v3's information pool).
"""

from ._adapter import ADAPTERS, Adapter
from ._base import Action, AgentInput, Decision, Step, Verdict, candidate_at
from ._env import OUTSIDE, Environment, Observed, Screen, StaticScreen, Transition
from ._episode import (
    ASKED,
    CONFIRM_ANSWERS,
    DECLINED,
    GAVE_UP,
    OUT_OF_STEPS,
    REFUSED,
    FrameworkAdapter,
    render_messages,
)
from ._images import encode_png, scale_box, screen_key, show
from ._parse import excerpt
from ._prompts import folder_digest
from ._replies import PARSE_MODES
from .appagent import AppAgentAdapter
from .appagent import Grid as AppAgentGrid
from .autoglm import AutoGLMAdapter
from .claude_cu import ClaudeCUAdapter
from .direct import DirectAdapter
from .gui_owl import GuiOwlAdapter, smart_resize
from .mai_ui import MaiUiAdapter
from .mobile_agent_e import MobileAgentEAdapter
from .mobile_agent_v2 import MobileAgentV2Adapter
from .mobile_agent_v3 import MobileAgentV3Adapter
from .qwen_vl import QwenVLAdapter
from .ui_tars import UiTarsAdapter

__all__ = [
    "ADAPTERS",
    "ASKED",
    "CONFIRM_ANSWERS",
    "DECLINED",
    "GAVE_UP",
    "OUTSIDE",
    "OUT_OF_STEPS",
    "PARSE_MODES",
    "REFUSED",
    "Action",
    "Adapter",
    "AgentInput",
    "AppAgentAdapter",
    "AppAgentGrid",
    "AutoGLMAdapter",
    "ClaudeCUAdapter",
    "Decision",
    "DirectAdapter",
    "Environment",
    "FrameworkAdapter",
    "GuiOwlAdapter",
    "MaiUiAdapter",
    "MobileAgentEAdapter",
    "MobileAgentV2Adapter",
    "MobileAgentV3Adapter",
    "Observed",
    "QwenVLAdapter",
    "Screen",
    "StaticScreen",
    "Step",
    "Transition",
    "UiTarsAdapter",
    "Verdict",
    "candidate_at",
    "encode_png",
    "excerpt",
    "folder_digest",
    "make_adapter",
    "render_messages",
    "scale_box",
    "screen_key",
    "show",
    "smart_resize",
]


def make_adapter(name: str, **options: object) -> Adapter:
    """An adapter by name, e.g. ``make_adapter("gui-owl", coords="norm1000")``."""
    return ADAPTERS.get(name)(**options)
