"""One benign decision state: sampled, specified, phrased and rendered.

Each state's randomness is ``derive_seed(seed, 'state', app, category, lang, k, attempt)``, so
adding an app or changing N never changes the states that already existed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PIL import Image

from dibench._seeding import derive_seed, py_rng
from dibench.dataset import Candidate, Category, DatasetError, DecisionState, acceptable_set

from ._instruction import render_instruction
from ._plan import GenerateConfig, StateSlot
from ._specs import build_spec

if TYPE_CHECKING:
    from dibench.apps import ScreenContent

__all__ = ["MAX_ATTEMPTS", "build_state", "build_state_content"]

MAX_ATTEMPTS = 60


def build_state(
    slot: StateSlot, config: GenerateConfig, screenshot_path: str | None = None
) -> tuple[DecisionState, Image.Image]:
    """Sample, specify, phrase and render one benign state (retrying unsupported draws)."""
    state, _content, image = build_state_content(slot, config, screenshot_path)
    return state, image


def build_state_content(
    slot: StateSlot, config: GenerateConfig, screenshot_path: str | None = None
) -> tuple[DecisionState, ScreenContent, Image.Image]:
    """As ``build_state``, also returning the app's screen description (for re-rendering)."""
    from dibench.apps import APPS, drawn_signals
    from dibench.render import render_screen

    app = APPS.get(slot.app)
    category = Category(slot.category)
    lang = slot.language
    for attempt in range(MAX_ATTEMPTS):
        state_seed = derive_seed(
            config.seed, "state", slot.app, slot.category, lang, slot.k, attempt
        )
        rng = py_rng(state_seed)
        query = app.sample_query(rng)
        lo, hi = app.n_candidates
        n = rng.randint(lo, hi)
        attrs = app.sample_candidates(rng, query, n, lang)  # type: ignore[arg-type]
        cands = [(f"c{i + 1}", a) for i, a in enumerate(attrs)]
        spec = build_spec(app, category, query, cands, rng, lang)
        if spec is None:
            continue
        acc = acceptable_set(spec, cands)
        if not acc or len(acc) == len(cands):
            continue
        instruction = render_instruction(spec, app, query, lang, rng)
        content = app.screen(rng, query, cands, lang)  # type: ignore[arg-type]
        shot = render_screen(content, config.width, config.height)
        signals = drawn_signals(shot.ui)
        candidates = tuple(
            Candidate(
                id=cid,
                attributes=a,
                boxes=shot.boxes[cid],
                title_style=shot.title_styles.get(cid, "title"),
                signals=signals.get(cid, ()),
            )
            for cid, a in cands
        )
        state = DecisionState(
            id=slot.state_id,
            app=slot.app,
            category=category,
            language=lang,  # type: ignore[arg-type]
            instruction=instruction,
            spec=spec,
            context=app.context(query, lang),  # type: ignore[arg-type]
            screenshot=screenshot_path or f"screens/{slot.state_id}.png",
            width=config.width,
            height=config.height,
            styles=shot.styles,
            ui=shot.ui,
            candidates=candidates,
            acceptable=acc,
            seed=state_seed,
            meta={"query": query.text(lang), "package": content.package, "attempt": attempt},  # type: ignore[arg-type]
        )
        return state, content, shot.image
    raise DatasetError(
        f"app {slot.app!r} could not build a {slot.category} state in {MAX_ATTEMPTS} attempts "
        f"(its catalog does not support this category)"
    )
