"""``dibench docs [TOPIC]``: the documentation that ships inside the package, printed.

The docs are the Markdown files of ``dibench/docs`` (package data and their only copy; the
repository's README links to the same files), so what a ``--help`` or an error names is
``dibench docs import``, which every install can read, never a path only a checkout has.
Printed as the Markdown they are, with the links a terminal cannot follow turned into text:
a link to another doc names its ``dibench docs`` command, a picture its file name.
"""

from __future__ import annotations

import re
from importlib.resources import files
from importlib.resources.abc import Traversable

import click

from ._app import fail, reader_may_stop
from ._app import main as cli

__all__ = ["doc_text", "doc_topics", "docs"]

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_IMG = re.compile(r"""<img\s[^>]*?src="(?:[^"]*/)?([^"/]+)"[^>]*>""")
_DOC_FILE = re.compile(r"([A-Z][A-Z_]*)\.md(#[\w-]*)?")


def _folder() -> Traversable:
    return files("dibench") / "docs"


def doc_topics() -> dict[str, str]:
    """Each topic (a doc's file name, lower case) and its one-line summary (its first heading),
    in name order."""
    out: dict[str, str] = {}
    for f in sorted(_folder().iterdir(), key=lambda f: f.name):
        if f.is_file() and f.name.endswith(".md"):
            text = f.read_text(encoding="utf-8")
            heading = next((ln for ln in text.splitlines() if ln.startswith("# ")), "# ")
            out[f.name[: -len(".md")].lower()] = heading[2:].strip()
    return out


def doc_text(topic: str) -> str:
    """The doc of ``topic`` (any case, ``.md`` allowed) as a terminal shows it; ``KeyError``
    for a topic no doc has."""
    name = topic.strip().lower().removesuffix(".md")
    if name not in doc_topics():
        raise KeyError(topic)
    text = (_folder() / f"{name.upper()}.md").read_text(encoding="utf-8")
    return _for_terminal(text)


def _for_terminal(text: str) -> str:
    """Links a terminal cannot follow, as text: another doc by its command, a section of this
    one by its title, a web address spelled out, a picture by its file name."""

    def link(m: re.Match[str]) -> str:
        label, target = m.group(1), m.group(2)
        if target.startswith("#"):
            return label
        if doc := _DOC_FILE.fullmatch(target):
            command = f"`dibench docs {doc.group(1).lower()}`"
            return command if label.strip("`") == f"{doc.group(1)}.md" else f"{label} ({command})"
        return target if label.strip("`") == target else f"{label} ({target})"

    text = _LINK.sub(link, text)
    text = _IMG.sub(lambda m: f"[picture: {m.group(1)}]", text)
    return "\n".join(ln for ln in text.splitlines() if ln.strip() not in ("<p>", "</p>")) + "\n"


@cli.command()
@click.argument("topic", required=False)
def docs(topic: str | None) -> None:
    """Print the doc of TOPIC, or list the topics.

    The docs ship with the package: `dibench docs import` prints the annotation format for
    your own screens, `dibench docs sweep` the sweep file's; others give the protocol, the
    defenses and how each framework is reproduced.
    """
    topics = doc_topics()
    if topic is None:
        width = max(map(len, topics))
        lines = [f"{name:<{width}}  {summary}" for name, summary in topics.items()]
    else:
        try:
            lines = [doc_text(topic).rstrip("\n")]
        except KeyError:
            fail(f"no doc {topic!r}; the topics are {', '.join(topics)}")
    with reader_may_stop():
        click.echo("\n".join(lines))
