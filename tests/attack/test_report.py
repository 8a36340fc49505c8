"""The "Adaptive attack" report section rendered from a real (small) attack directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dibench.attack import AttackConfig, AttackRequest, run_attack
from dibench.report._attack import attack_section
from dibench.report._html import attack_html
from dibench.report._text import attack_md


@pytest.mark.usefixtures("planted")
def test_section_from_an_attack_directory(attack_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "a"
    cfg = AttackConfig(budget=30, seed=0, population=6, top_k=2)
    res = run_attack(AttackRequest(attack_data, out, "direct", "planted", cfg))
    assert attack_section(tmp_path) is None  # not an attack directory
    sec = attack_section(out, examples=2)
    assert sec is not None
    assert sec.spent == res.spent and sec.budget == 30 and len(sec.results) == 3
    assert [q for q, _ in sec.curve] == sorted(q for q, _ in sec.curve)
    md = attack_md(sec)
    assert md.startswith("## Adaptive attack") and f"spent {res.spent} of 30" in md
    for r in res.heldout.results:
        assert r.probe in md
    html = attack_html(sec)
    assert html.startswith('<section id="attack">') and html.endswith("</section>")
    assert html.count("data:image/png;base64,") == len(sec.examples) == 2
    assert "<svg" in html and "<polyline" in html
    assert not re.search(r"<script", html)
