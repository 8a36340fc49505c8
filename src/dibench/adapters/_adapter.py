"""The agent-adapter interface and its registry: a framework's protocol around any provider.

An adapter turns an ``AgentInput`` (the decision screen) into one or more provider calls in its
framework's protocol, parses the replies as that framework does, and maps the final action to a
candidate. ``ADAPTERS`` holds every framework by name (``dibench.adapters`` entry points too).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from typing import ClassVar

from dibench._registry import Registry
from dibench._values import InstanceId
from dibench.providers import Provider

from ._base import AgentInput, Decision
from ._codec import Codec
from ._env import Environment, StaticScreen

__all__ = ["ADAPTERS", "Adapter", "codec_of"]


class Adapter(ABC):
    """A framework's perception/action protocol around any provider."""

    name: str = ""
    max_steps: int = 3  # calls to the acting role before giving up (⊥, 'ran out of steps')
    # "text": the model replies in a syntax the framework's codec reads and writes; "tools":
    # the vendor's tool-call protocol (structured calls: its codec moves them through the text a
    # step stores, and the tests that script replies as text leave it out)
    protocol: ClassVar[str] = "text"

    @abstractmethod
    async def decide(self, inp: AgentInput, provider: Provider) -> Decision:
        """Run the framework's protocol on one decision screen.

        Provider InfraError must propagate (the runner records it and retries on resume); every
        other failure (unparseable reply, tap outside candidates, giving up, step limit) is a
        Decision with candidate None and its cause.
        """

    async def run_episode(
        self,
        env: Environment,
        provider: Provider,
        *,
        instance_id: InstanceId,
        repeat: int,
        seed: int,
        system_prefix: str = "",
        max_steps: int | None = None,
    ) -> Decision:
        """Run the framework's loop over an interactive environment until it commits or ends.

        Adapters that only know single screens (e.g. a wrapper around ``decide``) accept a
        ``StaticScreen``; framework adapters override this with their own loop.
        """
        if isinstance(env, StaticScreen) and max_steps is None:
            inp = replace(
                env.inp,
                instance_id=instance_id,
                repeat=repeat,
                seed=seed,
                system_prefix=system_prefix or env.inp.system_prefix,
            )
            return await self.decide(inp, provider)
        raise NotImplementedError(f"{type(self).__name__} cannot run interactive episodes")

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "max_steps": self.max_steps}

    def codec(self) -> Codec:
        """The framework's reply format, configured by this adapter's options (``_codec``).

        Every framework sub-package overrides it; an adapter without one (a plugin wrapping
        ``decide``) raises NotImplementedError."""
        raise NotImplementedError(f"adapter {self.name!r} has no codec")


ADAPTERS: Registry[type[Adapter]] = Registry("adapter", group="dibench.adapters")


def codec_of(adapter: str | Adapter, **options: object) -> Codec:
    """The codec of a registered framework (by name, with its adapter options) or an adapter."""
    if isinstance(adapter, str):
        adapter = ADAPTERS.get(adapter)(**options)
    return adapter.codec()


def text_frameworks() -> list[str]:
    """The registered frameworks whose models reply in a text syntax (``protocol == "text"``):
    the ones a codec reads and writes, and whose replies the shared tests script as text."""
    return [n for n in ADAPTERS.names() if ADAPTERS.get(n).protocol == "text"]
