"""The sweep format is written where a user looks (issue 27 item 8): ``sweep --help`` and
``dibench docs sweep`` each carry a complete example, and both examples are sweeps
``load_sweep`` reads (so neither can drift from the format)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from dibench.runner import load_sweep

from .._cli import invoke

FIELDS = ("dataset", "out", "frameworks", "repeats", "limit", "probes", "parse", "defenses")


def _help_example() -> str:
    text = invoke("sweep", "--help").stdout
    body = text.split("CONFIG (", 1)[1].split("\n", 1)[1].split("\nOptions:", 1)[0]
    return textwrap.dedent(body)


def _doc_example() -> str:
    doc = invoke("docs", "sweep").stdout
    block = re.search(r"```toml\n(.*?)```", doc, re.S)
    assert block is not None
    return block.group(1)


@pytest.mark.parametrize("example", [_help_example, _doc_example], ids=["help", "docs"])
def test_the_written_sweep_example_is_a_sweep(example: object, tmp_path: Path) -> None:
    text = example()  # type: ignore[operator]
    for key in FIELDS:
        assert re.search(rf"^{key} = ", text, re.M), f"the example leaves out {key}"
    (tmp_path / "sweep.toml").write_text(text, encoding="utf-8")
    reqs = load_sweep(tmp_path / "sweep.toml")
    # 2 frameworks x 2 parse modes x 3 defenses x 1 model
    assert len(reqs) == 12
    assert {r.framework for r in reqs} == {"direct", "appagent"}
    assert reqs[0].dataset == tmp_path / "data" / "dibench-v1"
    assert reqs[0].config.repeats == 3 and reqs[0].config.limit == 20
