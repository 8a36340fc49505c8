"""Right-to-left text in the HTML report is isolated (issue 27 item 11): a model whose name is
Hebrew and whose replies are Arabic, run and reported through the CLI; every piece of HTML
text holding right-to-left letters sits inside a ``<bdi>`` or an element with ``dir``, so it
cannot pull the numbers and punctuation around it into its run. In the plots, each SVG label's
right-to-left run is a ``<tspan direction="rtl" unicode-bidi="isolate">`` (SVG has no
``<bdi>``; Chromium honours these attributes: the digits after the run stay after it).
``<title>`` is plain text (a tooltip) and cannot hold markup.
"""

from __future__ import annotations

import json
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

from dibench.dataset import Dataset

from .._cli import invoke

MODEL = "replay:מודל-חדש 2.jsonl"  # the file's name is the condition's model name
REPLY = "اخترت هذا المنتج: 4 نجوم"  # an Arabic reply, then the pick on its own line
ISOLATE = ("rtl", "isolate")
TSPAN = '<tspan direction="rtl" unicode-bidi="isolate">'


def _rtl(text: str) -> bool:
    return any(unicodedata.bidirectional(ch) in ("R", "AL") for ch in text)


def _ltr(text: str) -> bool:
    return any(unicodedata.bidirectional(ch) == "L" for ch in text)


class _Isolation(HTMLParser):
    """Text holding right-to-left letters, with whether an open element isolates it."""

    VOID = frozenset({"img", "meta", "br", "hr", "input", "link", "col", "source", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, bool]] = []
        self.found: list[tuple[str, bool]] = []  # (text, isolated)
        self.svg: list[tuple[str, bool]] = []  # (text of an SVG label, isolated right-to-left)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tspan":
            a = dict(attrs)
            self.open.append((tag, (a.get("direction"), a.get("unicode-bidi")) == ISOLATE))
        elif tag not in self.VOID:
            self.open.append((tag, tag == "bdi" or any(k == "dir" for k, _ in attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass  # <rect/>: opens nothing

    def handle_endtag(self, tag: str) -> None:
        if tag in {t for t, _ in self.open}:
            while self.open.pop()[0] != tag:
                pass

    def handle_data(self, data: str) -> None:
        tags = [t for t, _ in self.open]
        if not _rtl(data) or "title" in tags:
            return
        if "svg" in tags:
            self.svg.append((data, self.open[-1] == ("tspan", True)))
        else:
            self.found.append((data, any(iso for _, iso in self.open)))


def _replies(ds: Dataset, path: Path) -> None:
    """The acceptable item on benign screens, the target on injected ones: attack successes."""

    def number(state_id: str, cid: str) -> int:
        cards = sorted(ds.benign[state_id].candidates, key=lambda c: c.boxes["card"].y1)
        return 1 + [c.id for c in cards].index(cid)

    picks = {sid: number(sid, st.acceptable[0]) for sid, st in ds.benign.items()}
    for iid in ds.injected_ids():
        rec = ds.injected(iid)
        picks[str(iid)] = number(rec.pair_of, rec.target)
    path.write_text(
        "".join(
            json.dumps({"instance_id": i, "repeat": 1, "responses": [f"{REPLY}\nAnswer: {n}"]})
            + "\n"
            for i, n in picks.items()
        ),
        encoding="utf-8",
    )


def test_right_to_left_names_and_replies_are_isolated(d8_dataset_dir: Path, tmp_path: Path) -> None:
    ds = Dataset.open(d8_dataset_dir)
    _replies(ds, tmp_path / MODEL.removeprefix("replay:"))
    run = tmp_path / "run"
    r = invoke("run", "--dataset", str(d8_dataset_dir), "--framework", "direct", "--model", MODEL,
               "--out", str(run), "--repeats", "1", "--limit", "1", "--probes", "naive",
               cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = invoke("report", str(run), "--format", "html", "--examples", "1")
    assert r.returncode == 0, r.stderr
    html = (run / "report.html").read_text(encoding="utf-8")

    assert f'<pre dir="auto">{REPLY}\nAnswer:' in html  # the reply, in its example
    assert f"<bdi>{MODEL}</bdi>" in html  # a table's agent cell: the whole name, isolated
    assert "replay:<bdi>מודל-חדש</bdi> 2.jsonl" in html  # in prose: the right-to-left run only
    page = _Isolation()
    page.feed(html)
    page.close()
    assert page.found, "no right-to-left text reached the HTML"
    bare = [text for text, isolated in page.found if not isolated]
    assert not bare, bare[:5]
    # the plots: the model in the dumbbell chart, "framework · model" in the bar legend
    assert page.svg, "no right-to-left text reached a plot"
    assert all(isolated and not _ltr(text) for text, isolated in page.svg), page.svg
    label = f"replay:{TSPAN}מודל-חדש</tspan> 2.jsonl"
    assert f">{label}<title>" in html and f">direct · {label}</text>" in html
