"""``dibench export --format csv``: one row per stored result row, the columns of the JSONL
export, read back by Python's csv module to the same values (issue 38 item 6)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import orjson

from dibench.testing import FakeChatServer

from .._cli import invoke

# commas, quotes, a line break, Chinese and a formula's first character, as a model may reply
REPLY = 'He said "pick item 1, not 2";\n价格最低 = 第一个\n=SUM(A1:A3)\nAnswer: 1'


def test_csv_rows_read_back_to_the_jsonl_rows(
    three_state_dataset_dir: Path, tmp_path: Path
) -> None:
    out, ds = tmp_path / "run", str(three_state_dataset_dir)
    with FakeChatServer(REPLY) as srv:
        done = invoke(
            "run", "--dataset", ds, "--framework", "direct", "--model", "openai:m",
            "--base-url", srv.base_url, "--out", str(out), "--repeats", "2", "--limit", "2",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = []
    for fmt in ("jsonl", "csv"):
        r = invoke("export", str(out), "--format", fmt)
        assert r.returncode == 0, r.stderr
        assert r.stdout.endswith(f" rows to {out / f'results.{fmt}'}\n"), r.stdout
        said.append(r.stdout.split()[1])
    expected = [orjson.loads(x) for x in (out / "results.jsonl").read_bytes().splitlines()]
    n = len(expected)  # two states with their injected twins, two repeats each
    assert n > 2 * 2 and said == [str(n), str(n)]
    with (out / "results.csv").open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        got = [dict(zip(header, row, strict=True)) for row in reader]
    assert header == list(expected[0]) and len(got) == len(expected) == n
    for want, row in zip(expected, got, strict=True):
        for key, value in want.items():
            if value is None or value == "":
                assert row[key] == "", key  # null and an empty text: an empty cell
            elif isinstance(value, str):
                assert row[key] == value, key  # a text as it is (none here opens a formula)
            else:
                assert json.loads(row[key]) == value, key  # numbers, flags, lists: JSON text
    assert {r["replies"] for r in got} == {json.dumps([REPLY], ensure_ascii=False)}
    assert json.loads(got[0]["replies"]) == [REPLY]  # line breaks and quotes survive quoting


def test_a_text_a_spreadsheet_would_run_gets_a_leading_quote() -> None:
    from dibench.runner._export import csv_text

    assert csv_text("=SUM(A1:A3)") == "'=SUM(A1:A3)" and csv_text("@cmd") == "'@cmd"
    assert csv_text(-0.25) == "-0.25" and csv_text(True) == "true" and csv_text(None) == ""
    assert csv_text(["=x", "价格"]) == '["=x", "价格"]'  # JSON text opens with [ and is inert
