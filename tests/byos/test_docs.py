"""The README's import example is complete: copied as-is beside a screenshot, it imports."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dibench.dataset import Dataset

from .._cli import invoke
from .conftest import EN_ITEMS
from .screens import LIGHT, draw_screen

ROOT = Path(__file__).resolve().parents[2]


def test_readme_example_imports(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- byos-example -->\s*```json\n(.*?)```", readme, re.S)
    assert block is not None
    folder = tmp_path / "my-captures"
    folder.mkdir()
    (folder / "search1.json").write_text(block.group(1), encoding="utf-8")
    draw_screen(1080, 2340, LIGHT, EN_ITEMS, "MyShop").image.save(folder / "search1.png")
    out = tmp_path / "data" / "mine"
    r = invoke("import", "--from", str(folder), "--out", str(out))
    assert r.returncode == 0, r.stderr
    ds = Dataset.open(out)
    state = ds.benign[json.loads(block.group(1))["id"]]
    assert state.acceptable == ("c3",)
    assert sorted({i.split(".")[1] for i in ds.injected_ids()}) == ["c1", "c2"]
    # c2 has no price box and c3 no cover: probes follow the boxes
    assert "earbuds-cheapest.c2.combined_p" in ds and "earbuds-cheapest.c1.combined_p" in ds
    r = invoke("check", "--dataset", str(out), "--no-ocr")
    assert r.returncode == 0, r.stdout + r.stderr
