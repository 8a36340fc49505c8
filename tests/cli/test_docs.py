"""The docs travel with the package (issue 38 item 3): ``dibench docs`` lists them and
``dibench docs TOPIC`` prints one, and whatever a ``--help``, an error or a docstring says to read
is such a command, never a ``docs/X.md`` path that only a checkout of the repository has."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click

import dibench
from dibench.cli import main

from .._cli import invoke

SRC = Path(dibench.__file__).parent
DOCS = sorted((SRC / "docs").glob("*.md"))
# a doc named by its file (docs/IMPORT.md, IMPORT.md), which an installed package has nowhere
DOC_PATH = re.compile(rf"\bdocs/\w+\.md|\b(?:{'|'.join(d.stem for d in DOCS)})\.md\b")
NAMED = re.compile(r"dibench docs ([a-z][\w-]*)")  # a topic, not the TOPIC placeholder


def _heading(doc: Path) -> str:
    return doc.read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")


def _helps(group: click.Group = main, path: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    """Every command's ``--help`` as a user gets it (sub-groups walked)."""
    yield " ".join(path) or "dibench", invoke(*path, "--help").stdout
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _helps(command, (*path, name))
        else:
            yield " ".join((*path, name)), invoke(*path, name, "--help").stdout


def _sources() -> Iterator[tuple[str, str]]:
    """The package's source files, whole: every error message, help text, docstring and
    comment in them."""
    for f in sorted(SRC.rglob("*.py")):
        yield str(f.relative_to(SRC)), f.read_text(encoding="utf-8")


def test_the_topics_are_listed_with_their_headings() -> None:
    r = invoke("docs")
    assert r.returncode == 0 and r.stderr == ""
    rows = [line.split(None, 1) for line in r.stdout.splitlines()]
    assert [name for name, _ in rows] == [d.stem.lower() for d in DOCS]
    assert [summary for _, summary in rows] == [_heading(d) for d in DOCS]
    assert len(DOCS) >= 10 and "import" in dict(rows) and "sweep" in dict(rows)


def test_a_topic_prints_its_doc_in_any_case() -> None:
    doc = (SRC / "docs" / "IMPORT.md").read_text(encoding="utf-8")
    out = [invoke("docs", t) for t in ("import", "IMPORT", "Import.md")]
    assert all(r.returncode == 0 and r.stderr == "" for r in out)
    assert out[0].stdout == out[1].stdout == out[2].stdout
    assert out[0].stdout.startswith("# Bring your own screens\n")
    # the text is the file's, paragraph for paragraph (only links and pictures are rewritten)
    sample = next(p for p in doc.split("\n\n") if "--force-photo" in p and "](" not in p)
    assert sample in out[0].stdout


def test_links_a_terminal_cannot_follow_become_text() -> None:
    for d in DOCS:
        text = invoke("docs", d.stem.lower()).stdout
        assert not re.search(r"\]\((?!https?:)", text), d.name  # no relative link left
        assert "<img" not in text and "<p>" not in text, d.name
        assert set(NAMED.findall(text)) <= {x.stem.lower() for x in DOCS}, d.name
    sweep = invoke("docs", "sweep").stdout
    assert "Defense specs: `dibench docs defenses`; frameworks and parse modes: `dibench docs " in (
        sweep
    )
    assert "[picture: byos-keyboard-before-after.png]" in invoke("docs", "import").stdout
    assert "inspect_ai (https://inspect.aisi.org.uk/)" in invoke("docs", "inspect").stdout


def test_an_unknown_topic_is_one_line_naming_the_topics() -> None:
    r = invoke("docs", "setup")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("dibench: error: no doc 'setup'; the topics are architecture, ")
    assert len(r.stderr.splitlines()) == 1 and "sweep" in r.stderr


def test_no_help_or_error_names_a_docs_path_and_each_named_doc_is_a_topic() -> None:
    topics = {d.stem.lower() for d in DOCS}
    helps = dict(_helps())
    assert {"import", "sweep", "docs", "run"} <= helps.keys()
    named: dict[str, set[str]] = {}
    for where, text in [*helps.items(), *_sources()]:
        assert not DOC_PATH.search(text), (where, DOC_PATH.search(text))
        for topic in NAMED.findall(text):
            named.setdefault(topic.lower(), set()).add(where)
    assert {"import", "sweep"} <= named.keys()  # what `import --help` and `sweep --help` name
    assert named.keys() <= topics, {t: w for t, w in named.items() if t not in topics}
    assert "`dibench docs import`" in " ".join(helps["import"].split())
    assert "`dibench docs sweep`" in helps["sweep"]


def test_a_reader_that_stops_early_ends_it_quietly() -> None:
    """``dibench docs frameworks | head -1``: the reader has its line; no trace, exit 0."""
    cmd = [sys.executable, "-m", "dibench", "docs", "frameworks"]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:
        assert p.stdout is not None and p.stderr is not None
        first = p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read()
    assert first.startswith(b"# Frameworks") and p.returncode == 0 and err == b"", err
