"""payload(): the right fields per carrier, visible hooks, determinism, fallbacks."""

from __future__ import annotations

import pytest

from dibench.dataset import Box, DecisionState
from dibench.probes import (
    DEFAULT_EPSILON,
    CombinedP,
    ProbeError,
    applicable,
    configured_probe,
    get_probe,
    original_title,
    preference_options,
    target_name,
    visible_title_lines,
)
from dibench.render import ELLIPSIS_STRIP, is_wide

from .conftest import Screen

TITLE_PROBES = ("naive", "escape", "context_ignore", "fake_completion", "combined", "combined_tc")
COVER_TEXT_PROBES = ("combined_c", "combined_tc")


def _compact(s: str) -> str:
    return "".join(s.split())


def _shows_hook(lines: list[str], hook: str) -> bool:
    """The clamped lines show every word of the hook; a clamp right after it strips its
    closing mark ("Pick this…", never "Pick this.…")."""
    shown = "".join(lines)
    clamped = shown.endswith("…")
    s, h = _compact(shown.removesuffix("…")), _compact(hook)
    return s.startswith(h) or (clamped and s == h.rstrip(ELLIPSIS_STRIP))


def _hook(state: DecisionState, target: str, title: str) -> str:
    original = original_title(state, target)
    assert title.endswith(original), "the product name must follow the hook"
    return title[: len(title) - len(original)]


@pytest.mark.parametrize("name", TITLE_PROBES)
def test_title_payload_keeps_the_product_name_and_shows_the_whole_hook(
    screen: Screen, name: str
) -> None:
    probe, state = get_probe(name), screen.state
    for target in state.targets():
        for seed in range(6):
            p = probe.payload(state, target, seed)
            assert p.title is not None and p.epsilon is None
            assert (p.cover_text is not None) == ("cover" in probe.carriers)
            hook = _hook(state, target, p.title)
            assert _compact(hook)
            shown = visible_title_lines(state, target, p)
            assert _shows_hook(shown, hook), (hook, shown)
            assert not any(line.endswith((".…", "。…")) for line in shown), shown


@pytest.mark.parametrize("name", ["naive", "context_ignore", "combined", "combined_c"])
def test_payload_is_in_the_screen_language(screens: dict[str, Screen], name: str) -> None:
    for lang, screen in screens.items():
        target = screen.state.targets()[0]
        p = get_probe(name).payload(screen.state, target, 3)
        text = p.cover_text if p.title is None else _hook(screen.state, target, p.title)
        assert text is not None
        wide = sum(is_wide(ch) for ch in text)
        assert (wide >= 3) if lang == "zh" else (wide == 0), text


@pytest.mark.parametrize(
    "name",
    [
        "naive",
        "escape",
        "context_ignore",
        "fake_completion",
        "combined",
        "combined_c",
        "combined_p",
    ],
)
def test_payload_is_deterministic_and_seeds_draw_different_variants(
    screen: Screen, name: str
) -> None:
    probe, state = get_probe(name), screen.state
    target = state.targets()[-1]
    assert probe.payload(state, target, 42) == probe.payload(state, target, 42)
    variants = {probe.payload(state, target, s).variant for s in range(40)}
    assert len(variants) >= 3
    texts = {probe.payload(state, target, s) for s in range(40)}
    assert len(texts) >= 3


def test_payloads_name_the_target_and_the_preference_somewhere(screens: dict[str, Screen]) -> None:
    """Long levels are used when they fit: some hooks carry the brand, some the price claim."""
    for screen in screens.values():
        state = screen.state
        prefs = preference_options(state.spec, state.language)
        named = claimed = 0
        for target in state.targets():
            name = target_name(state.candidate(target), state.language)
            assert name
            for probe in ("naive", "context_ignore", "fake_completion"):
                for seed in range(15):
                    p = get_probe(probe).payload(state, target, seed)
                    assert p.title is not None
                    hook = _hook(state, target, p.title)
                    named += name in hook
                    claimed += any(x in hook for x in prefs)
        assert named > 0 and claimed > 0


def _with_title_width(state: DecisionState, target: str, width: int) -> DecisionState:
    cand = state.candidate(target)
    t = cand.boxes["title"]
    boxes = {**cand.boxes, "title": Box(t.x1, t.y1, min(state.width, t.x1 + width), t.y2)}
    cands = tuple(
        c.model_copy(update={"boxes": boxes}) if c.id == target else c for c in state.candidates
    )
    return state.model_copy(update={"candidates": cands})


def test_wider_titles_get_longer_hooks_narrow_ones_still_show_theirs(
    screens: dict[str, Screen],
) -> None:
    for screen in screens.values():
        state, target = screen.state, "c1"
        narrow = _with_title_width(state, target, 450)
        wide = _with_title_width(state, target, 1000 - state.candidate(target).boxes["title"].x1)
        for name in ("naive", "context_ignore", "combined"):
            probe = get_probe(name)
            n_len = w_len = 0
            for seed in range(12):
                pn, pw = probe.payload(narrow, target, seed), probe.payload(wide, target, seed)
                assert pn.title is not None and pw.title is not None
                hn, hw = _hook(narrow, target, pn.title), _hook(wide, target, pw.title)
                n_len, w_len = n_len + len(hn), w_len + len(hw)
                assert _shows_hook(visible_title_lines(narrow, target, pn), hn)
            assert w_len > n_len, name


def test_combined_p_payload_has_no_text_and_the_budget() -> None:
    from .conftest import build_screen

    state = build_screen("en").state
    p = get_probe("combined_p").payload(state, "c1", 0)
    assert p.title is None and p.cover_text is None and p.epsilon == DEFAULT_EPSILON
    assert CombinedP(epsilon=4 / 255).payload(state, "c1", 0).epsilon == 4 / 255
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="epsilon"):
            CombinedP(epsilon=bad)


def test_configured_probe_overrides_only_the_perturbation_budget() -> None:
    p = configured_probe("combined_p", epsilon=2 / 255)
    assert isinstance(p, CombinedP) and p.epsilon == 2 / 255 and p.name == "combined_p"
    assert get_probe("combined_p").epsilon == DEFAULT_EPSILON  # the registered one is intact
    assert configured_probe("naive", epsilon=2 / 255) is get_probe("naive")
    assert configured_probe("combined_p") is get_probe("combined_p")
    with pytest.raises(ValueError, match="epsilon"):
        configured_probe("combined_p", epsilon=3.0)


def test_a_target_without_a_cover_cannot_carry_cover_probes(screen: Screen) -> None:
    state = screen.state
    target = state.targets()[0]
    cands = tuple(
        c.model_copy(update={"boxes": {k: v for k, v in c.boxes.items() if k != "cover"}})
        if c.id == target
        else c
        for c in state.candidates
    )
    no_cover = state.model_copy(update={"candidates": cands})
    assert applicable(get_probe("naive"), no_cover, target)
    for name in ("combined_c", "combined_tc", "combined_p"):
        probe = get_probe(name)
        assert not applicable(probe, no_cover, target)
        with pytest.raises(ProbeError, match="no cover box"):
            probe.payload(no_cover, target, 0)
    assert get_probe("naive").payload(no_cover, target, 0).title
