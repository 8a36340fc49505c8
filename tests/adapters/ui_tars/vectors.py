"""The UI-TARS reply vectors (``tests/adapters/vectors/ui-tars.jsonl``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VECTORS: list[dict[str, Any]] = [
    json.loads(line)
    for line in (Path(__file__).parent.parent / "vectors" / "ui-tars.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]
BY_ID = {v["id"]: v for v in VECTORS}
