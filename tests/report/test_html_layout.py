"""The HTML report's widest table fits a 1,200-px window (issue 27 item 9), seen in Chromium."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .._cli import invoke

CHROMIUM = shutil.which("chromium")
DEFERRING = "appstore-exploratory-en-000,hotel-exploratory-en-000"


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (scripts/setup.sh --dev)")
def test_the_key_finding_table_needs_no_sideways_scroll_at_1200_px(
    d8_dataset_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    # the OCR agent asking when tied adds the deferral columns: the widest key-finding table.
    # Two states of the low-resolution dataset (its OCR costs a quarter of the full-size
    # one's), the hotel list one where the agent defers.
    r = invoke(
        "run", "--dataset", str(d8_dataset_dir), "--framework", "direct", "--model",
        "ocr-agent", "--out", str(out), "--states", DEFERRING, "--repeats", "1",
        "--probes", "naive", "--provider-opt", "ask_when_tied=true",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = invoke("report", str(out), "--format", "html", "--examples", "0")
    assert r.returncode == 0, r.stderr
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "DEFER" in html  # some run deferred: the key-finding table has its columns
    overflow = _overflow(html, tmp_path, 1200)
    assert overflow and overflow[0][1] <= 0, f"the key-finding table scrolls by {overflow[0]} px"


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (scripts/setup.sh --dev)")
def test_the_chain_tables_need_no_sideways_scroll_at_1280_px(
    chain_run: Path, tmp_path: Path
) -> None:
    """A chain simulation's Depth tables (two food chains of two decisions: intervals in every
    cell) fit a 1,280-px window; the exploration filmstrip says where the chains are drawn
    instead of "only 0 benign/injected pairs with recorded moves" (issue 38 item 6)."""
    out = tmp_path / "chain"
    shutil.copytree(chain_run, out)  # the reports are written into the run directory
    for fmt in ("html", "md"):
        r = invoke("report", str(out), "--format", fmt, "--examples", "0")
        assert r.returncode == 0, r.stderr
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "only 0" not in html and "pairs with recorded moves" not in html
    assert "the episodes are decision chains: the Depth section draws a hijacked chain" in html
    widths = _overflow(html, tmp_path, 1280)
    chains = [w for name, w in widths if name == "depth-chains"]  # the heading above them
    assert len(chains) == 2 and max(chains) <= 0, widths
    assert dict(widths)["page"] <= 0, widths
    md = (out / "report.md").read_text(encoding="utf-8")
    depth = md.split("### Decision chains", 1)[1].split("\n## ", 1)[0]
    per_decision, whole = (ln for ln in depth.splitlines() if ln.startswith("| framework"))
    assert per_decision.count("|") == 10 and whole.count("|") == 7  # 9 and 6 columns


def _overflow(html: str, tmp_path: Path, width: int) -> list[tuple[str, int]]:
    """(id, px) for every table wrapper in document order (the id of the heading or section
    before it), by how far its table is wider than its box as Chromium lays the page out
    ``width`` px wide; last ("page", px) for the document."""
    probe = html.replace(
        "</body>",
        "<script>const label = w => { for (let e = w; e; e = e.parentElement) {"
        " for (let s = e.previousElementSibling; s; s = s.previousElementSibling)"
        " if (s.id) return s.id; if (e.parentElement && e.parentElement.id)"
        " return e.parentElement.id; } return ''; };"
        "document.title = [...document.querySelectorAll('.tablewrap')].map(w => "
        "label(w) + '=' + (w.scrollWidth - w.clientWidth))"
        ".concat(['page=' + (document.documentElement.scrollWidth - "
        "document.documentElement.clientWidth)]).join(',')</script></body>",
    ).replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';")
    page = tmp_path / "probe.html"
    page.write_text(probe, encoding="utf-8")
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--window-size={width},900",
         f"--user-data-dir={tmp_path / 'chromium'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=60,
    ).stdout  # fmt: skip
    title = dom.split("<title>", 1)[1].split("</title>", 1)[0]
    return [(x.rsplit("=", 1)[0], int(x.rsplit("=", 1)[1])) for x in title.split(",") if x]
