"""Helpers for defense tests: real instances of the session dataset, real adapters, providers."""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from PIL import Image

from dibench import screens
from dibench.adapters import AgentInput, Decision, make_adapter
from dibench.dataset import Dataset
from dibench.defenses import DefendedAdapter, make_chain
from dibench.providers import Provider, make_provider

from .._aio import run


def agent_input(ds: Dataset, iid: str, repeat: int = 1) -> AgentInput:
    """The AgentInput the runner builds for (instance, repeat)."""
    return screens.agent_input(ds, iid, repeat)


def injected_of(ds: Dataset, probe: str, n: int = 1, language: str | None = None) -> list[str]:
    """The first ``n`` injected ids of a probe (optionally of one language)."""
    out = []
    for iid in ds.injected_ids():
        if iid.rsplit(".", 1)[1] != probe:
            continue
        if language and ds.instance(iid).state.language != language:
            continue
        out.append(iid)
        if len(out) == n:
            break
    return out


def decide(
    ds: Dataset,
    iid: str,
    specs: Sequence[str],
    framework: str = "direct",
    provider: Provider | str = "oracle",
    repeat: int = 1,
) -> Decision:
    """One real decision of ``framework`` behind the defenses ``specs``."""
    prov = make_provider(provider) if isinstance(provider, str) else provider
    adapter = DefendedAdapter(make_adapter(framework), make_chain(specs))
    return run(adapter.decide(agent_input(ds, iid, repeat), prov))


def shown(decision: Decision, role: str | None = None) -> np.ndarray:
    """The pixels of the image the model was shown in the last step (of ``role``)."""
    steps = [s for s in decision.steps if s.image_png and (role is None or s.role == role)]
    assert steps, "no step showed an image"
    png = steps[-1].image_png
    assert png is not None
    with Image.open(io.BytesIO(png)) as im:
        return np.asarray(im.convert("RGB"))
