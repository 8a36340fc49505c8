"""Agent adapters: how each framework shows a decision screen to a model and reads its action.

Built-ins, registered in ``ADAPTERS`` by name (options are keyword arguments of the class):
``appagent`` (a tagged screenshot, elements named by tag), ``mobile-agent-v2`` (OCR/icon
perception, planning/decision/reflection, screenshot pixels), ``mobile-agent-e``
(manager/operator/reflector, JSON atomic actions), ``mobile-agent-v3`` (the Mobile-Agent-v3
framework: a manager, an operator writing GUI-Owl's JSON actions on a Qwen-resized
screenshot, a reflector and a notetaker), ``gui-owl`` (GUI-Owl alone, end to end:
``mobile_use`` tool calls on a Qwen-resized screenshot), ``gui-owl-1.5`` (GUI-Owl-1.5 as
Mobile-Agent-v3.5's AndroidWorld agent: an action line and a ``mobile_use`` call on a 0-1000
screen, the last call read), ``mai-ui`` (MAI-UI's navigation agent: ``mobile_use`` tool calls
on a 0-999 grid), ``ui-tars`` (UI-TARS-1.5: Thought and Action lines on a Qwen-resized
screenshot), ``autoglm`` (Open-AutoGLM's phone agent: Python-like calls on a 0-1000 grid,
full-size PNG), ``qwen-vl`` (Qwen3-VL's own mobile format: ``mobile_use`` tool calls on a
0-999 grid, read as MobileWorld does, or as the Qwen3-VL cookbook does), ``ui-venus``
(UI-Venus-1.5: tagged thinking, one call and a conclusion, on a Qwen-resized screenshot),
``gelab`` (GELab-Zero: tab-separated fields on a 0-1000 grid, Chinese prompt, JPEG),
``claude-cu`` (Claude's computer-use tool through the Messages API: ``tool_use`` blocks,
the documented screenshot scaling; ``protocol == "tools"``: structured calls, no text
syntax), ``openai-cu`` (OpenAI's computer tool through the Responses API: ``computer_call``
items, GA or preview, safety checks as confirmations), ``gemini-cu`` (Gemini's computer-use
tool as MobileWorld runs it: ``functionCall`` parts on a 0-999 grid) and
``direct`` (a multiple-choice baseline). Each format is described in its sub-package.

Every adapter runs its framework's loop over an ``Environment``: ``decide(inp, provider)`` on
one dataset decision screen (a ``StaticScreen``), ``run_episode(env, provider, ...)`` over an
interactive simulated app (``dibench.sim``).

Each framework is one sub-package (``appagent/``, ``mobile_agent_v2/``, ...); importing it
registers it. It is made of ``prompts/`` (its packaged wording, ``ROLE.txt`` /
``ROLE.system.txt`` as ``prompts=DIR`` expects), ``_parse.py`` (its readers, faithful and
robust), ``_codec.py`` (its reply format both ways: ``read`` with those readers, ``write`` a
step in its exact syntax and coordinate space; the offline agents, the ``mimic-*`` probes, the
attack grammar and the test server write through it, and no other module spells its syntax)
and ``_loop.py`` (its roles in order; ``codec()`` gives its codec), plus its golden reply
vectors under ``tests/adapters/``. What they share lives here: ``_base`` (the values), ``_env``
(environments), ``_adapter`` (the interface, registry and ``codec_of``), ``_codec`` (the codec
interface: ``Codec``, ``Frame``, ``Say``), ``_mobile_use`` (the ``mobile_use`` tool-call kit of
the Qwen family), ``_episode`` (one episode's book-keeping), ``_images`` (what a model is
shown), ``_moves`` (offline agents' decisions), ``_computer_use`` (what the vendors' computer-use
adapters share), ``_parse`` and ``_replies`` (reading replies),
``_prompts`` (the template loader), ``_perception`` (v2's and E's OCR list) and ``_pool`` (E's
and v3's information pool).
"""

from ._adapter import ADAPTERS, Adapter, codec_of, text_frameworks
from ._base import Action, AgentInput, Decision, Step, Verdict, candidate_at
from ._codec import Codec, Frame, Say
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
from ._images import (
    JPEG_FILE,
    JPEG_PASS,
    RESIZE,
    SCREEN_STEPS,
    apply_steps,
    encode_jpeg,
    encode_png,
    mark_origin,
    note_origin,
    origin_of,
    scale_box,
    screen_key,
    show,
    shown_bytes,
    shown_origin,
)
from ._parse import excerpt
from ._prompts import folder_digest
from ._replies import PARSE_MODES, FrameworkError, ReplyError
from .appagent import AppAgentAdapter
from .appagent import Grid as AppAgentGrid
from .autoglm import AutoGLMAdapter
from .claude_cu import ClaudeCUAdapter
from .direct import DirectAdapter
from .gelab import GelabAdapter
from .gemini_cu import GeminiCUAdapter
from .gui_owl import GuiOwlAdapter, smart_resize
from .gui_owl_15 import GuiOwl15Adapter, GuiOwl15Codec
from .mai_ui import MaiUiAdapter
from .mobile_agent_e import MobileAgentEAdapter
from .mobile_agent_v2 import MobileAgentV2Adapter
from .mobile_agent_v3 import MobileAgentV3Adapter
from .openai_cu import OpenAICUAdapter
from .qwen_vl import QwenVLAdapter
from .ui_tars import UiTarsAdapter
from .ui_venus import UiVenusAdapter

__all__ = [
    "ADAPTERS",
    "ASKED",
    "CONFIRM_ANSWERS",
    "DECLINED",
    "GAVE_UP",
    "JPEG_FILE",
    "JPEG_PASS",
    "OUTSIDE",
    "OUT_OF_STEPS",
    "PARSE_MODES",
    "REFUSED",
    "RESIZE",
    "SCREEN_STEPS",
    "Action",
    "Adapter",
    "AgentInput",
    "AppAgentAdapter",
    "AppAgentGrid",
    "AutoGLMAdapter",
    "ClaudeCUAdapter",
    "Codec",
    "Decision",
    "DirectAdapter",
    "Environment",
    "Frame",
    "FrameworkAdapter",
    "FrameworkError",
    "GelabAdapter",
    "GeminiCUAdapter",
    "GuiOwl15Adapter",
    "GuiOwl15Codec",
    "GuiOwlAdapter",
    "MaiUiAdapter",
    "MobileAgentEAdapter",
    "MobileAgentV2Adapter",
    "MobileAgentV3Adapter",
    "Observed",
    "OpenAICUAdapter",
    "QwenVLAdapter",
    "ReplyError",
    "Say",
    "Screen",
    "StaticScreen",
    "Step",
    "Transition",
    "UiTarsAdapter",
    "UiVenusAdapter",
    "Verdict",
    "apply_steps",
    "candidate_at",
    "codec_of",
    "encode_jpeg",
    "encode_png",
    "excerpt",
    "folder_digest",
    "make_adapter",
    "mark_origin",
    "note_origin",
    "origin_of",
    "render_messages",
    "scale_box",
    "screen_key",
    "show",
    "shown_bytes",
    "shown_origin",
    "smart_resize",
    "text_frameworks",
]


def make_adapter(name: str, **options: object) -> Adapter:
    """An adapter by name, e.g. ``make_adapter("gui-owl", coords="norm1000")``."""
    return ADAPTERS.get(name)(**options)
