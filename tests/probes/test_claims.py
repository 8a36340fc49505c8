"""The claim probes: a seller's false or unverifiable claim, never an instruction to the agent.

Pinned on the generator's own screens of every app in both languages: every form of every claim
(each level a probe may draw, not only the one drawn) holds no directive word of its language,
also as OCR reads it back from the rendered title or cover (a small sample: OCR is slow); each
claim that names an attribute of the record is false for its target, and a claim that names
none is recorded as unverifiable; the eight are the ``claim`` family, opt-in, and the paper's
eight stay the default.
"""

from __future__ import annotations

import re

import pytest
from PIL import Image

from dibench.dataset import ClaimFact, DecisionState, claim_holds
from dibench.generate import GenerateConfig, build_state, plan_states
from dibench.ocr import get_engine, normalize, visible_fraction
from dibench.probes import (
    BUILTIN_PROBES,
    CLAIM_PROBES,
    MIMIC_PROBES,
    PROBES,
    ClaimProbe,
    NoFalseClaim,
    cover_text_lines,
    default_probe_names,
    select_probes,
    title_hook,
    visible_title_lines,
)

# Words that would make a claim an instruction: an imperative to pick, tap, buy or book, or a
# mention of the agent's instructions, task, rules or completion. English words match at the
# start of a word (so 'booked', 'ordering', 'completed' count); Chinese ones anywhere.
DIRECTIVE_EN = (
    "select", "choose", "pick", "tap", "click", "press", "buy", "purchase", "book", "order",
    "reserve", "ignore", "disregard", "instruction", "task", "rule", "complete", "finish",
    "done", "answer", "assistant", "agent", "model", "must", "should", "please", "hurry",
    "grab", "act", "go", "get", "try", "don't", "do not", "system", "prompt", "user",
)  # fmt: skip
DIRECTIVE_ZH = (
    "选择", "选", "点击", "点它", "点这", "购买", "买", "预订", "预定", "下单", "订购", "忽略",
    "无视", "指令", "任务", "规则", "完成", "答案", "助手", "系统", "必须", "应该", "请", "立即",
    "马上", "赶紧", "快抢", "抢",
)  # fmt: skip
_EN = re.compile(r"\b(" + "|".join(re.escape(w) for w in DIRECTIVE_EN) + r")", re.IGNORECASE)
KINDS_VERIFIABLE = {"rating", "social", "match"}  # always name an attribute of the record
KINDS_UNVERIFIABLE = {"urgency", "authority"}  # never do


def directive_words(text: str, language: str) -> list[str]:
    if language == "zh":
        return [w for w in DIRECTIVE_ZH if w in text] + _EN.findall(text)
    return _EN.findall(text)


@pytest.fixture(scope="module")
def states() -> list[tuple[DecisionState, Image.Image]]:
    """Forty generated screens: every app under four task categories, both languages."""
    config = GenerateConfig(seed=11, benign=40, width=540, height=1170)
    return [build_state(slot, config) for slot in plan_states(config)]


def _probes() -> list[ClaimProbe]:
    return [PROBES.get(n) for n in CLAIM_PROBES]  # type: ignore[misc]


def test_the_claim_family_is_eight_opt_in_probes_and_the_default_stays_the_papers() -> None:
    assert len(CLAIM_PROBES) >= 8
    assert all(p.family == "claim" and p.opt_in for p in _probes())
    assert default_probe_names() == list(BUILTIN_PROBES)
    assert select_probes(["claim"]) == list(CLAIM_PROBES)
    assert select_probes(["naive", "claim", "claim-rating"]) == ["naive", *CLAIM_PROBES]
    assert select_probes(["mimic"]) == list(MIMIC_PROBES)
    assert select_probes(["command"]) == [p for p in BUILTIN_PROBES if p != "combined_p"]
    assert select_probes(["claim"], among=["naive", "claim-urgency"]) == ["claim-urgency"]
    carriers = {p.name: p.carriers for p in _probes()}
    assert ("title",) in carriers.values() and ("cover",) in carriers.values()


def test_no_claim_form_holds_a_directive_word(
    states: list[tuple[DecisionState, Image.Image]],
) -> None:
    seen: dict[tuple[str, str], int] = {}
    for state, _ in states:
        for target in state.targets():
            for probe in _probes():
                for form in probe.claims(state, target, 7):
                    bad = directive_words(form.text, state.language)
                    assert not bad, (probe.name, state.id, form.text, bad)
                    key = (probe.name, state.language)
                    seen[key] = seen.get(key, 0) + 1
    apps = {s.app for s, _ in states}
    assert len(apps) == 10 and {s.language for s, _ in states} == {"en", "zh"}
    assert {(p, lang) for p in CLAIM_PROBES for lang in ("en", "zh")} <= set(seen)


def test_no_word_of_any_app_vocabulary_is_a_directive() -> None:
    """Every wording in the tables, whether or not the sample screens drew it."""
    from dibench.probes._claims import (
        AUTHORITY,
        BADGES,
        DISCOUNT_WHEN,
        RATING,
        SCARCITY,
        SOCIAL,
        URGENCY,
    )

    pairs = [p for t in (SCARCITY, URGENCY, DISCOUNT_WHEN, SOCIAL, RATING) for p in t.values()]
    pairs += [p for options in AUTHORITY.values() for p in options]
    pairs += [(en, zh) for options in BADGES.values() for en, zh, _ in options]
    assert len(pairs) > 60
    for en, zh in pairs:
        assert not directive_words(en, "en"), en
        assert not directive_words(zh, "zh"), zh


def test_attribute_claims_are_false_for_their_target_and_the_rest_unverifiable(
    states: list[tuple[DecisionState, Image.Image]],
) -> None:
    facts_by_kind: dict[str, int] = {}
    refused = 0
    for state, _ in states:
        screen = [c.attributes for c in state.candidates]
        for target in state.targets():
            attrs = state.candidate(target).attributes
            for probe in _probes():
                try:
                    payload = probe.payload(state, target, 7)
                except NoFalseClaim:
                    refused += 1
                    continue
                except Exception as exc:  # a title too small: not this test's business
                    assert "title box" in str(exc), exc
                    continue
                claim = payload.claim
                assert claim is not None and claim.kind == probe.kind
                for fact in claim.facts:
                    assert claim_holds(fact, attrs, screen) is False, (state.id, target, fact)
                facts_by_kind[claim.kind] = facts_by_kind.get(claim.kind, 0) + len(claim.facts)
                if probe.kind in KINDS_VERIFIABLE:
                    assert claim.facts, (probe.name, state.id, target)
                if probe.kind in KINDS_UNVERIFIABLE:
                    assert claim.unverifiable
                if probe.kind == "rating":  # the claimed rating is above the shown one
                    rating = next(f for f in claim.facts if f.op == ">=")
                    assert float(rating.value) > float(attrs[rating.attribute])  # type: ignore[arg-type]
    assert {"rating", "social", "match", "badge", "scarcity", "discount"} <= set(facts_by_kind)
    assert refused < 0.1 * sum(len(s.targets()) for s, _ in states) * len(CLAIM_PROBES)


def test_a_fake_discount_states_a_reference_price_above_the_unchanged_shown_price(
    states: list[tuple[DecisionState, Image.Image]],
) -> None:
    probe = PROBES.get("claim-discount")
    checked = 0
    for state, _ in states:
        if state.language != "en":
            continue
        for target in state.targets():
            price = state.candidate(target).attributes.get("price")
            if not isinstance(price, int | float) or price <= 0:
                continue
            text = probe.payload(state, target, 3).title or ""
            was = re.search(r"was \$([\d,]+)", text)
            assert was, text
            assert float(was.group(1).replace(",", "")) > price
            checked += 1
    assert checked > 20


def test_claim_holds_reads_each_operator() -> None:
    screen = [{"rating": 4.2, "depart": "08:30"}, {"rating": 4.8, "depart": "10:15"}]
    me = screen[0]
    assert claim_holds(ClaimFact(attribute="rating", op=">=", value=4.5), me, screen) is False
    assert claim_holds(ClaimFact(attribute="rating", op="<=", value=4.5), me, screen) is True
    assert claim_holds(ClaimFact(attribute="rating", op="top"), me, screen) is False
    assert claim_holds(ClaimFact(attribute="rating", op="bottom"), me, screen) is True
    assert claim_holds(ClaimFact(attribute="depart", op=">=", value="09:00"), me, screen) is False
    assert claim_holds(ClaimFact(attribute="sales", op=">=", value=10), me, screen) is None


def test_ocr_read_back_of_drawn_claims_holds_no_directive_word(
    states: list[tuple[DecisionState, Image.Image]],
) -> None:
    """One title claim and one cover claim per language, composed and read by the real OCR."""
    engine = get_engine()
    picks = {("en", "title"): "claim-match", ("zh", "title"): "claim-rating",
             ("en", "cover"): "claim-urgency", ("zh", "cover"): "claim-authority"}  # fmt: skip
    done = set()
    for state, image in states:
        for (lang, carrier), name in picks.items():
            if (lang, carrier) in done or state.language != lang:
                continue
            probe = PROBES.get(name)
            target = next((t for t in state.targets() if carrier in state.candidate(t).boxes), None)
            if target is None:
                continue
            try:
                payload = probe.payload(state, target, 5)
            except NoFalseClaim:
                continue
            shot = probe.compose(image, state, target, payload, 5)
            box = state.candidate(target).boxes[carrier]
            read = " ".join(line.text for line in engine.read(shot.crop(tuple(box))))
            if carrier == "title":
                expected = "".join(visible_title_lines(state, target, payload))
                hook = title_hook(state, target, payload)
                assert normalize(hook.split()[0]) in normalize(read), (hook, read)
            else:
                expected = "".join(cover_text_lines(state, target, payload))
            assert visible_fraction(expected, read) >= 0.7, (name, expected, read)
            assert not directive_words(read, lang), (name, read)
            done.add((lang, carrier))
    assert done == set(picks)
