"""A reply that no UTF-8 file can hold is stored, not a crash of the store mid-run.

A Python ``str`` can carry a lone surrogate (U+D800-U+DFFF on its own), which UTF-8 cannot
encode: SQLite and the replay file refuse it. An SDK that decodes a reply leniently can hand
one over, so a run keeps every reply as text it can write, with U+FFFD in each such place.
"""

from __future__ import annotations

from pathlib import Path

from dibench.runner import RunDir

from .._cli import invoke

MODULE = '''
from dibench.providers import PROVIDERS, Completion, Provider


class Lone(Provider):
    """Answers item 1 with a lone surrogate on either side."""

    name = "lone"

    async def complete(self, request):
        return Completion(text="Answer: \\ud800 1 \\udfff", model=self.name)


PROVIDERS.add("lone", lambda rest="": Lone(), replace=True)
'''


def test_a_reply_with_a_lone_surrogate_is_stored_with_a_replacement_character(
    three_state_dataset_dir: Path, tmp_path: Path
) -> None:
    module = tmp_path / "lone.py"
    module.write_text(MODULE, encoding="utf-8")
    out = tmp_path / "run"
    r = invoke(
        "run", "--dataset", str(three_state_dataset_dir), "--framework", "direct", "--model",
        "lone", "--load", str(module), "--out", str(out), "--repeats", "1", "--limit", "1",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    with RunDir(out).store() as store:
        rows = list(store.rows())
        assert rows and all(row.decision is not None for row in rows)  # item 1 was read
        (cond,) = store.conditions()
        details = [store.details(cond, row.instance_id, row.repeat) for row in rows]
    replies = [s.reply for d in details if d for s in d.steps]
    assert replies and all(rep == "Answer: \ufffd 1 \ufffd" for rep in replies)
    recorded = "".join(p.read_text(encoding="utf-8") for p in (out / "replies").glob("*.jsonl"))
    assert "\\ufffd" in recorded or "\ufffd" in recorded
