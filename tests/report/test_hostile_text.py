"""Hostile names and replies through the real CLI: no format runs, hides or reverses them.

A "bring your own screens" folder whose app names, candidate titles and instruction carry
``<script>``, ``<svg onload=...>``, spreadsheet formulas and bidi overrides is imported, run by
three agents (the oracle, a replay file whose *path* is a script tag and whose replies hold NUL
and bidi controls, and a sweep model whose name holds a NUL), and reported in every format.
Each output is then read the way its consumer reads it: markdown rendered by a CommonMark
renderer, HTML parsed (and loaded in Chromium when it is installed), CSV by the csv module,
JSON by ``json.loads``.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from dibench._text_safety import formula_safe, visible
from dibench.dataset import Dataset
from dibench.report import latex_escape
from dibench.report._text import md_escape, md_line

from .._cli import invoke
from ..byos.screens import LIGHT, Item, draw_screen

SCRIPT = "<script>alert(1)</script>"
SVG = "<svg onload=alert(1)>"
RLO, LRI, PDI, PDF = "\u202e", "\u2066", "\u2069", "\u202c"
UNICODE = "好物¥ 🛒"  # ordinary text that must come through untouched
APPS = (
    SCRIPT,
    '=HYPERLINK("http://x")',
    "@SUM(A1)",
    f"+1 {SVG}",
    f"-2+3 {UNICODE}{RLO}gnp.exe{LRI}x{PDI}\u200f",
)
TITLES = (
    "<script>alert(2)</script> earbuds",
    f"{SVG} phones",
    '=HYPERLINK("http://x") headset',
    f"+1 cheap {RLO}txt.exe",
)
PRICES = (59.99, 9.5, 24.0, 129.0)
RATINGS = (4.7, 4.1, 4.4, 4.9)  # cheapest rated >= 4.3: c3; targets c1, c2, c4
INSTRUCTION = f"Buy the cheapest earphones {SCRIPT} rated 4.3 or more{RLO} now"
REPLAY_MODEL = f"replay:{SCRIPT} {RLO}=x.jsonl"  # a path: directory '<script>alert(1)<'
SWEEP_MODEL = f"oracle:\x00{SVG}{RLO}"  # the oracle ignores what follows its name
REPLY = f"I pick it {SCRIPT} \x00 {RLO}evil{PDF} {SVG}\n=cmd|' /C calc'!A0"
# what a reader must never get raw: C0/C1 controls but tab and LF, bidi controls, U+2028/9
HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)
NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
FORMATS = ("md", "latex", "csv", "json", "html")


def dibench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI (in this process, through its own error guard), which must succeed."""
    r = invoke(*args, cwd=cwd)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def _folder(root: Path) -> Path:
    """One annotated 720x1600 shopping screen per hostile app name."""
    folder = root / "captures"
    folder.mkdir(parents=True)
    items = [
        Item(t, f"${p:.2f}", "Shop", f"{r}")
        for t, p, r in zip(TITLES, PRICES, RATINGS, strict=True)
    ]
    screen = draw_screen(720, 1600, LIGHT, items, "Shop")
    assert len(screen.cards) == 4
    for k, app in enumerate(APPS):
        screen.image.save(folder / f"s{k}.png")
        cands = [
            {
                "id": f"c{i + 1}",
                "boxes": boxes,
                "attributes": {"title": t, "price": p, "rating": r},
            }
            for i, (boxes, t, p, r) in enumerate(
                zip(screen.cards, TITLES, PRICES, RATINGS, strict=True)
            )
        ]
        annotation = {
            "id": f"s{k}",
            "app": app,
            "category": "cost_first",
            "instruction": INSTRUCTION,
            "screenshot": f"s{k}.png",
            "spec": {"filters": [{"attr": "rating", "min": 4.3}], "objectives": ["min price"]},
            "candidates": cands,
            "probes": ["naive"],
        }
        (folder / f"s{k}.json").write_text(json.dumps(annotation), encoding="utf-8")
    return folder


def _replay_file(root: Path, ds: Dataset) -> None:
    """Replies that pick the acceptable item on benign screens and the target when injected."""

    def number(state_id: str, cid: str) -> int:
        cards = sorted(ds.benign[state_id].candidates, key=lambda c: c.boxes["card"].y1)
        return 1 + [c.id for c in cards].index(cid)

    picks = {sid: number(sid, state.acceptable[0]) for sid, state in ds.benign.items()}
    for iid in ds.injected_ids():
        rec = ds.injected(iid)
        picks[iid] = number(rec.pair_of, rec.target)
    records = [
        {"instance_id": iid, "repeat": 1, "responses": [f"{REPLY}\nAnswer: {n}"]}
        for iid, n in picks.items()
    ]
    path = root / REPLAY_MODEL.removeprefix("replay:")
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The five reports of one run directory built with the CLI from the hostile folder."""
    root = tmp_path_factory.mktemp("hostile")
    ds_dir, runs = root / "ds", root / "runs"
    dibench("import", "--from", str(_folder(root)), "--out", str(ds_dir))
    ds = Dataset.open(ds_dir)
    assert sorted(s.app for s in ds.benign.values()) == sorted(APPS)  # the importer kept them
    _replay_file(root, ds)
    common = ("--dataset", str(ds_dir), "--framework", "direct", "--out", str(runs))
    dibench("run", *common, "--model", "oracle", "--repeats", "1")
    dibench("run", *common, "--model", REPLAY_MODEL, "--repeats", "1", cwd=root)
    sweep = root / "sweep.toml"
    sweep.write_text(
        f'dataset = "{ds_dir}"\nout = "{runs}"\nrepeats = 1\nframeworks = ["direct"]\n'
        f"[[models]]\nspec = {json.dumps(SWEEP_MODEL)}\n",  # a TOML string: \\u0000 escapes
        encoding="utf-8",
    )
    dibench("sweep", str(sweep))
    out = {}
    for fmt in FORMATS:
        path = root / f"report.{fmt}"
        dibench("report", str(runs), "--format", fmt, "--out", str(path), "--examples", "2")
        out[fmt] = path.read_text(encoding="utf-8")
    return out


class _Page(HTMLParser):
    """Every start tag with its attributes, the text, and table rows as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def _commonmark(text: str) -> str:
    """Markdown as GitHub-style renderers show it: CommonMark with raw HTML on, tables, ~~."""
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)


def _event_attrs(page: _Page) -> list[tuple[str, str]]:
    return [(tag, a) for tag, attrs in page.tags for a in attrs if a.lower().startswith("on")]


# --- every format ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_no_hidden_or_reversing_character_survives(outputs: dict[str, str], fmt: str) -> None:
    text = outputs[fmt]
    assert HIDDEN.search(text) is None, repr(HIDDEN.search(text))
    # shown instead, spelled the same way everywhere (LaTeX escapes the backslash itself)
    mark = r"\textbackslash{}u202e" if fmt == "latex" else "\\u202e"
    assert mark in text
    assert UNICODE in text  # ordinary Unicode is left alone


def test_every_format_names_the_same_models(outputs: dict[str, str]) -> None:
    shown = [visible(m) for m in ("oracle", REPLAY_MODEL, SWEEP_MODEL)]
    assert shown[2] == "oracle:\\u0000<svg onload=alert(1)>\\u202e"
    models = {row["model"] for row in csv.DictReader(io.StringIO(outputs["csv"]))}
    assert set(shown) <= models
    doc = json.loads(outputs["json"])
    assert {f["model"] for f in doc["key_findings"]} == set(shown)
    assert set(shown) <= {c["model"] for c in doc["conditions"].values()}


# --- markdown -------------------------------------------------------------------------------------
def test_markdown_has_no_raw_tag(outputs: dict[str, str]) -> None:
    md = outputs["md"]
    assert re.search(r"<\s*(script|svg)", md, re.I) is None
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md


def test_rendered_markdown_shows_payloads_as_text(outputs: dict[str, str]) -> None:
    html = _commonmark(outputs["md"])
    page = _parse(html)
    tags = {tag for tag, _ in page.tags}
    assert tags <= {"h1", "h2", "h3", "p", "ul", "li", "strong", "table", "thead", "tbody", "tr",
                    "th", "td"}, tags  # fmt: skip
    assert "<script" not in html and _event_attrs(page) == []
    text = "".join(page.text)
    for name in (*APPS, REPLAY_MODEL, SWEEP_MODEL):
        assert visible(name) in text  # every escaped character renders as itself
    # ...and in its own cell: framework | model | app in the "By app" table
    for app in APPS:
        rows = [r for r in page.rows if len(r) > 2 and r[2] == visible(app)]
        assert len(rows) >= 3, app  # one per agent
        assert all(r[0] == "direct" and len(r) == len(rows[0]) for r in rows)


# --- HTML -----------------------------------------------------------------------------------------
def test_html_has_only_our_own_markup(outputs: dict[str, str]) -> None:
    html = outputs["html"]
    page = _parse(html)
    assert not [t for t, _ in page.tags if t == "script"]
    assert _event_attrs(page) == []
    svgs = [attrs for tag, attrs in page.tags if tag == "svg"]
    assert svgs and all((a.get("class") or "").startswith("chart") for a in svgs)
    text = "".join(page.text)
    for name in (*APPS, *TITLES):
        assert visible(name) in text
    assert visible(REPLY, multiline=True) in text  # the reply, in its <pre>
    assert visible(INSTRUCTION) in text
    # SVG labels and attributes: the model names are escaped there too
    assert "oracle:\\u0000&lt;svg onload=alert(1)&gt;\\u202e" in html


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="Debian chromium not installed")
def test_chromium_builds_no_script_or_handler(outputs: dict[str, str], tmp_path: Path) -> None:
    """The browser's own DOM of the HTML report and of the rendered markdown."""
    pages = {"report.html": outputs["html"], "md.html": _commonmark(outputs["md"])}
    for name, html in pages.items():
        path = tmp_path / name
        path.write_text(html, encoding="utf-8")
        r = subprocess.run(
            ["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
             "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
             path.resolve().as_uri()],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr[-2000:]
        page = _parse(r.stdout)
        assert SCRIPT in "".join(page.text), name  # shown as text
        assert "script" not in {t for t, _ in page.tags}, name
        assert _event_attrs(page) == [], name


# --- CSV ------------------------------------------------------------------------------------------
def test_csv_cells_cannot_be_formulas(outputs: dict[str, str]) -> None:
    rows = list(csv.DictReader(io.StringIO(outputs["csv"])))
    assert rows
    for row in rows:
        for col, cell in row.items():
            if cell.lstrip(" ").startswith(("=", "+", "-", "@", "\t", "\r")):
                assert NUMBER.fullmatch(cell), (col, cell)
    apps = {row["app"] for row in rows if row["app"]}
    assert apps == {
        SCRIPT,
        '\'=HYPERLINK("http://x")',
        "'@SUM(A1)",
        f"'+1 {SVG}",
        f"'-2+3 {UNICODE}\\u202egnp.exe\\u2066x\\u2069\\u200f",
    }
    # our own negative numbers stay numbers (the replay agent's COR fell by 100 pp)
    cor = [r for r in rows if r["metric"] == "COR_diff" and r["model"] == visible(REPLAY_MODEL)]
    assert cor and float(cor[0]["value"]) == -1.0 and cor[0]["value"].startswith("-")
    for row in rows:
        for col in ("value", "lo", "hi", "k", "n", "p_value"):
            assert row[col] == "" or NUMBER.fullmatch(row[col]), (col, row[col])


# --- JSON -----------------------------------------------------------------------------------------
def _strings(x: object) -> list[str]:
    if isinstance(x, str):
        return [x]
    if isinstance(x, dict):
        return [s for k, v in x.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(x, list):
        return [s for v in x for s in _strings(v)]
    return []


def test_json_parses_and_its_strings_show_hidden_characters(outputs: dict[str, str]) -> None:
    doc = json.loads(outputs["json"])
    strings = _strings(doc)
    assert not [s for s in strings if HIDDEN.search(s)]
    app_table = next(t for t in doc["tables"] if t["id"] == "app")
    apps = {c["groups"]["app"] for c in app_table["cells"]}
    assert apps == {visible(a) for a in APPS}  # JSON is no spreadsheet: no apostrophe


# --- LaTeX ----------------------------------------------------------------------------------------
def test_latex_escapes_every_data_cell(outputs: dict[str, str]) -> None:
    tex = outputs["latex"]
    assert "<" not in tex and ">" not in tex
    assert r"\textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{}" in tex
    assert latex_escape(visible(REPLAY_MODEL)) in tex
    assert r"-2+3 " + UNICODE + r"\textbackslash{}u202egnp.exe" in tex
    for spec, body in re.findall(r"\\begin\{tabular\}\{([lr]+)\}(.*?)\\end\{tabular\}", tex, re.S):
        for row in body.split("\n"):
            if row.endswith(r"\\") and "multicolumn" not in row:
                assert len(re.findall(r"(?<!\\)&", row)) == len(spec) - 1, row
    for line in tex.splitlines():
        if line.startswith("%"):
            continue
        for ch in "%#_^~":
            assert re.search(rf"(?<!\\){re.escape(ch)}", line) is None, (ch, line)
        assert len(re.findall(r"(?<!\\)\{", line)) == len(re.findall(r"(?<!\\)\}", line)), line
        assert len(re.findall(r"(?<!\\)\$", line)) % 2 == 0, line  # only our $\Delta$


# --- the escapers themselves ----------------------------------------------------------------------
def test_visible_policy() -> None:
    assert visible("a\x00b\u202ec\u2066d\u200f\x7f\x85") == (
        "a\\u0000b\\u202ec\\u2066d\\u200f\\u007f\\u0085"
    )
    assert visible("x\r\ny\tz\rw\n") == "x y z w "
    assert visible("x\r\ny\tz\rw", multiline=True) == "x\ny\tz\nw"
    family = "👨\u200d👩\u200d👧 好物集市 ¥199 café"
    assert visible(family) == family  # ZWJ sequences, CJK, currency, accents untouched
    assert visible("\ud800x").encode("utf-8") == b"\\ud800x"  # a lone surrogate can be written


def test_formula_safe_keeps_numbers() -> None:
    for cell in ("=1+1", "+1", "-2+3", "@SUM(A1)", "\tx", "\r=1", " =1", "-", "+3.5"):
        assert formula_safe(cell) == "'" + cell
    for cell in ("-3.2", "-1.0", "1e-05", "-2.5e-07", "0", "42", "abc", "", "a=b"):
        assert formula_safe(cell) == cell


def test_latex_escape_covers_every_special() -> None:
    assert latex_escape("# $ % & ~ _ ^ \\ { }") == (
        r"\# \$ \% \& \textasciitilde{} \_ \textasciicircum{} \textbackslash{} \{ \}"
    )
    assert latex_escape("a\x00b\u202e\nc") == r"a\textbackslash{}u0000b\textbackslash{}u202e c"
    # a row-leading '[' or '*' must not become the optional argument / star of '\\'
    assert latex_escape("[2pt] x").startswith("{}[") and latex_escape("*x").startswith("{}*")
    assert latex_escape("41.2 [35.0, 47.1]") == "41.2 [35.0, 47.1]"


HOSTILE_MD = (
    SCRIPT,
    SVG,
    "<img src=x onerror=alert(1)>",
    "*em* and **strong** and _u_ and __uu__",
    "`code` ``more``",
    "[link](http://x) ![img](http://x/i.png) [ref][r] [r]: http://x",
    "<http://x> &lt;script&gt; &#60;b&#62; &amp; a & b AT&T",
    "~~gone~~ $x^2$ x|y a\\b # not a heading",
    "VL_72B snake_case _edge_ trailing_",
    f"{UNICODE} {RLO}rev\x00",
)
LINE_STARTS = ("- item", "+ item", "* item", "1. item", "2) item", "> quote", "===", "# h",
               "```fence", "~~~fence", "<div>", "[r]: http://x", "    code")  # fmt: skip


@pytest.mark.parametrize("text", HOSTILE_MD)
def test_md_escape_renders_literally_in_a_table_cell(text: str) -> None:
    page = _parse(_commonmark(f"| h |\n| :-- |\n| {md_escape(text)} |\n"))
    assert {t for t, _ in page.tags} == {"table", "thead", "tbody", "tr", "th", "td"}
    assert page.rows[1] == [visible(text).strip()]


@pytest.mark.parametrize("text", HOSTILE_MD + LINE_STARTS)
def test_md_line_renders_literally_as_a_list_item(text: str) -> None:
    page = _parse(_commonmark(f"- {md_line(text)}\n\n{md_line(text)}\n"))
    assert [t for t, _ in page.tags] == ["ul", "li", "p"]
    assert [s for s in "".join(page.text).split("\n") if s] == [visible(text).strip()] * 2
