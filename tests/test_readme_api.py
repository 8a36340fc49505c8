"""The README's Python API block runs as written: taken from the README itself, so the two
cannot drift apart (issue 27: it once crashed on ``out="runs/oracle"`` given as a str)."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _api_block() -> str:
    """The first ``python`` block under the README's ``## Python API`` heading."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None, "the README's Python API section lost its code block"
    return block.group(1)


@pytest.mark.slow
def test_the_readme_python_api_block_runs_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with contextlib.chdir(tmp_path):
        exec(compile(_api_block(), "README.md", "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out.split()
    assert printed[0] == "100.0", printed  # the oracle completes every benign task
    assert (tmp_path / "runs" / "oracle" / "run.json").is_file()
    assert (tmp_path / "data" / "small" / "manifest.json").is_file()
