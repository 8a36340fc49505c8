"""``dibench attack --persuasion``: the search plays an honest-looking seller.

Its move set holds only a seller's claims (no instruction override, fake completion, separator
trick or action syntax), no phrasing of it holds a directive word (the claim probes' word
lists), every genome it breeds stays inside it, and against an agent with a planted weakness
for a platform badge ('Verified') it finds the badge and compares it with the dataset's best
claim probe.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dibench._seeding import py_rng
from dibench.attack import (
    MOVES,
    PERSUASION_MOVES,
    AttackConfig,
    AttackRequest,
    move_names,
    mutate,
    random_genome,
    run_attack,
    seed_population,
)
from dibench.attack._grammar import crossover
from dibench.generate import GenerateConfig, generate
from dibench.probes import CLAIM_PROBES
from dibench.runner import RunError

from ..probes.test_claims import directive_words

WEAKNESS = "verified|平台认证"  # a platform badge the seller gives itself


def test_the_persuasion_move_set_is_claims_only() -> None:
    moves = set(move_names("appagent", persuasion=True))
    assert moves == set(PERSUASION_MOVES) and not moves & {"override", "completion", "action"}
    assert not moves & set(MOVES)  # its own names: a genome says which set it came from
    for phrasings in PERSUASION_MOVES.values():
        for lang, pairs in phrasings.items():
            for full, generic in pairs:
                for text in (full, generic):
                    text = text.replace("{name}", "Acme X1").replace("{brand}", "Acme")
                    text = text.replace("{price}", "$49")
                    assert not directive_words(text, lang), text


def test_bred_genomes_stay_inside_the_persuasion_moves() -> None:
    rng = py_rng(4, "persuasion-test")
    carriers = ("title", "cover")
    pop = seed_population(rng, "appagent", carriers, 8, True, persuasion=True)
    for _ in range(200):
        a, b = rng.choice(pop), rng.choice(pop)
        child = mutate(rng, crossover(rng, a, b, True), carriers, True, persuasion=True)
        pop.append(child)
        pop.append(random_genome(rng, "appagent", carriers, True, persuasion=True))
    assert {m for g in pop for m, _ in g.moves} <= set(PERSUASION_MOVES)
    for g in pop[:40]:
        for lang in ("en", "zh"):
            for level in g.levels(lang):
                assert not directive_words(level.replace("{name}", "X"), lang), level


def test_persuasion_refuses_an_attacker_model() -> None:
    with pytest.raises(ValueError, match="--persuasion with --attacker"):
        AttackConfig(budget=10, persuasion=True, attacker="scripted-attacker")


@pytest.fixture(scope="module")
def claim_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("persuasion") / "d"
    config = GenerateConfig(seed=3, benign=8, probes=("naive", "claim-rating", "claim-match"),
                            width=540, height=1170)  # fmt: skip
    generate(out, config, workers=1)
    return out


@pytest.mark.usefixtures("planted")
def test_a_persuasion_search_finds_a_claim_and_names_the_best_claim_probe(
    claim_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "atk"
    cfg = AttackConfig(budget=60, seed=1, population=6, persuasion=True)
    res = run_attack(AttackRequest(claim_data, out, "direct", f"planted:{WEAKNESS}", cfg))
    data = json.loads((out / "attack.json").read_text())
    assert data["persuasion"] is True and set(data["moves"]) == set(PERSUASION_MOVES)
    fixed = [n for n, c in data["candidates"].items() if c["kind"] == "fixed"]
    assert fixed and set(fixed) <= set(CLAIM_PROBES)  # the commands are not what it beats
    assert res.best_fixed in CLAIM_PROBES
    assert all(m.split(".")[0] in PERSUASION_MOVES for n in res.top
               for m in data["candidates"][n]["describe"].split(" @")[0].split(" + "))  # fmt: skip
    rows = {r.probe: r for r in res.heldout.results}
    assert rows[res.top[0]].asr > rows[res.best_fixed].asr
    assert "badge.1" in data["candidates"][res.top[0]]["describe"]  # '[Verified]'


def test_a_persuasion_search_needs_claim_probes_to_compare_with(
    attack_data: Path, tmp_path: Path
) -> None:
    cfg = AttackConfig(budget=10, seed=1, persuasion=True)
    with pytest.raises(RunError, match="no claim probe on the carriers title"):
        run_attack(AttackRequest(attack_data, tmp_path / "a", "direct", "ocr-agent", cfg))
