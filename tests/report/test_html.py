"""The HTML report: self-contained, script-free, and hostile text shows as text."""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from dibench.metrics import Intervals
from dibench.report import CSP, Report, build_report, render_report, write_report

from .conftest import SCRIPT_REPLY, SCRIPT_TITLE, make_run

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def html(report: Report) -> str:
    return render_report(report, "html")


def test_no_script_can_run(html: str) -> None:
    assert re.search(r"<script", html, re.I) is None
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in html
    assert CSP == "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    # nothing is fetched: no external sources, stylesheets or event handlers
    assert re.search(r'(src|href)="(https?:)?//', html) is None
    assert "<link" not in html and re.search(r"\son[a-z]+=", html) is None


def test_payloads_render_as_text(html: str) -> None:
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the model's reply
    assert "&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt;" in html  # the target title
    assert SCRIPT_TITLE.strip() not in html and SCRIPT_REPLY not in html


def test_has_plots_tables_and_explanations(html: str, report: Report) -> None:
    # ASR by attack, ASR by carrier, TCR/COR dumbbells + the defended agent's frontier, and
    # the Position section's choice share by rank
    assert html.count("<svg") == 5
    assert 'aria-label="Choice share by rank, benign vs injected"' in html
    for label in ("ASR by attack", "ASR by carrier", "TCR and COR, benign vs injected"):
        assert f'aria-label="{label}"' in html
    for metric in ("TCR", "COR", "ASR"):
        assert f"<dt>{metric}</dt>" in html
    # + findings + facts, and the Cost to the user section's own tables (harm, change, shift)
    # and the Position section's (rank, first card, signals, logit)
    counts = {}
    for sec in ("cost", "position"):
        found = re.search(rf'<section id="{sec}">.*?</section>', html, re.S)
        assert found is not None
        counts[sec] = found.group(0).count('<table class="est">')
    assert counts == {"cost": 3, "position": 4}
    assert html.count('<table class="est">') == len(report.tables) + 2 + sum(counts.values())
    assert "Qwen2.5-VL_72B (int4 &amp; 8% sparsity)" in html
    assert 'class="num' in html and "font-variant-numeric:tabular-nums" in html


def test_examples_show_both_screens(html: str, report: Report) -> None:
    assert html.count('<article class="example"') == len(report.examples) == 4
    images = re.findall(r'src="data:image/jpeg;base64,([^"]+)"', html)
    assert len(images) == 8
    with Image.open(io.BytesIO(base64.b64decode(images[0]))) as im:
        assert im.width == 400 and im.height > im.width  # a downscaled phone screen
    assert "picked" in html and "(target)" in html


def test_missing_dataset_is_reported_not_fatal(tmp_path: Path, report_dataset: Path) -> None:
    copy = tmp_path / "gone"
    shutil.copytree(report_dataset, copy)
    run = make_run(tmp_path / "run", copy)
    shutil.rmtree(copy)
    rep = build_report(run.rundir, examples=2, intervals=Intervals(n_boot=100))
    assert rep.dataset is not None and "dataset unavailable" in rep.dataset_note
    assert len(rep.examples) == 2
    ex = rep.examples[0]
    assert ex.instruction is None and ex.target_title is None
    # the store still has the images the model saw; they stand in, unmarked
    assert ex.benign_image is not None and "images the model was shown" in ex.image_note
    page = render_report(rep, "html")
    assert "dataset unavailable" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium not installed")
def test_renders_in_a_real_browser(tmp_path: Path, report: Report) -> None:
    page = write_report(report, "html", tmp_path / "report.html")
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--screenshot={shot}",
            "--window-size=1280,1600",
            page.resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    with Image.open(shot) as im:
        assert im.size == (1280, 1600)
        top = im.convert("RGB").crop((0, 0, 1280, 60)).getcolors(1 << 16) or []
        # the dark header band is drawn: the page rendered with its inline CSS
        assert max(top)[1] == (16, 39, 59)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium not installed")
def test_script_payloads_stay_inert_and_the_page_logs_no_errors(
    tmp_path: Path, report: Report
) -> None:
    """The browser's own DOM and console: payloads are text, nothing runs, nothing fails."""
    page = write_report(report, "html", tmp_path / "report.html")
    r = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom  # shown as text
    assert "<script" not in dom.lower()  # no script element exists in the live page
    problems = [
        line
        for line in r.stderr.splitlines()
        if "CONSOLE" in line or "Uncaught" in line or "Refused to" in line
    ]
    assert not problems, problems
