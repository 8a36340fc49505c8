"""Agent adapters: how each framework shows a decision screen to a model and reads its action.

Built-ins, registered in ``ADAPTERS`` by name (options are keyword arguments of the class):
``appagent`` (tagged screenshot, ``tap(n)``), ``mobile-agent-v2`` (OCR/icon perception,
planning/decision/reflection, ``Tap (x, y)``), ``mobile-agent-e`` (manager/operator/reflector,
JSON atomic actions), ``mobile-agent-v3`` (the Mobile-Agent-v3 framework: a manager, an
operator writing GUI-Owl's JSON actions on a Qwen-resized screenshot, a reflector and a
notetaker), ``gui-owl`` (GUI-Owl alone, end to end: ``mobile_use`` tool calls on a
Qwen-resized screenshot) and ``direct`` (a multiple-choice baseline).

Every adapter runs its framework's loop over an ``Environment``: ``decide(inp, provider)`` on
one dataset decision screen (a ``StaticScreen``), ``run_episode(env, provider, ...)`` over an
interactive simulated app (``dibench.sim``).
"""

from ._appagent import AppAgentAdapter
from ._base import ADAPTERS, Action, Adapter, AgentInput, Decision, Step, candidate_at
from ._common import GAVE_UP, OUT_OF_STEPS, OUTSIDE, REFUSED, FrameworkAdapter
from ._direct import DirectAdapter
from ._env import Environment, Screen, StaticScreen, Transition
from ._gui_owl import GuiOwlAdapter, smart_resize
from ._mobile_agent_e import MobileAgentEAdapter
from ._mobile_agent_v2 import MobileAgentV2Adapter
from ._mobile_agent_v3 import MobileAgentV3Adapter

__all__ = [
    "ADAPTERS",
    "GAVE_UP",
    "OUTSIDE",
    "OUT_OF_STEPS",
    "REFUSED",
    "Action",
    "Adapter",
    "AgentInput",
    "AppAgentAdapter",
    "Decision",
    "DirectAdapter",
    "Environment",
    "FrameworkAdapter",
    "GuiOwlAdapter",
    "MobileAgentEAdapter",
    "MobileAgentV2Adapter",
    "MobileAgentV3Adapter",
    "Screen",
    "StaticScreen",
    "Step",
    "Transition",
    "candidate_at",
    "make_adapter",
    "smart_resize",
]


def make_adapter(name: str, **options: object) -> Adapter:
    """An adapter by name, e.g. ``make_adapter("gui-owl", coords="norm1000")``."""
    return ADAPTERS.get(name)(**options)
