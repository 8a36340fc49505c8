"""The exported tables: their columns, and how a DIBench record becomes a row and back.

One list of columns per config feeds everything that must agree: the Arrow schema written to
Parquet, the Hugging Face features stored in the schema metadata and in the card's YAML, and the
conversion both ways. Common fields are typed columns; nested structures whose shape differs
from record to record (constraint spec, UI tree, candidates with free-form attributes) are JSON
strings. ``row_to_line`` rebuilds the exact JSONL line; where a line is not the canonical dump of
its record (hand-edited files), the export keeps it verbatim in ``raw_line``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import BaseModel

from dibench.dataset import DecisionState, InjectedRecord, dump_line

__all__ = [
    "BENIGN",
    "CONFIGS",
    "FORMAT",
    "FORMAT_VERSION",
    "INJECTED",
    "PIXEL_COLUMNS",
    "SPLIT",
    "Column",
    "Table",
    "line_to_row",
    "row_to_line",
]

FORMAT = "dibench-hf"
FORMAT_VERSION = 1
SPLIT = "test"  # a benchmark: every instance is for evaluation

_SCALARS = {"string": "string", "int32": "int32", "int64": "int64", "float64": "float64"}


@dataclass(frozen=True)
class Column:
    """One column: ``kind`` is a scalar dtype, ``strings`` (a list), ``json``, ``image`` or
    ``payload`` (the injected record's payload struct)."""

    name: str
    kind: str
    doc: str

    def arrow_type(self) -> Any:
        import pyarrow as pa

        if self.kind in _SCALARS:
            return getattr(pa, self.kind)()  # pa.string, pa.int32, ... share the dtype names
        if self.kind == "json":
            return pa.string()
        if self.kind == "strings":
            return pa.list_(pa.string())
        if self.kind == "image":
            return pa.struct([("bytes", pa.binary()), ("path", pa.string())])
        if self.kind == "payload":
            return pa.struct([(n, Column(n, k, "").arrow_type()) for n, k in _PAYLOAD])
        raise ValueError(f"unknown column kind {self.kind!r}")

    def feature(self) -> dict[str, Any]:
        """The column as ``datasets.Features.to_dict()`` spells it."""
        if self.kind == "image":
            return {"_type": "Image"}
        if self.kind == "strings":
            return {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"}
        if self.kind == "payload":
            return {n: Column(n, k, "").feature() for n, k in _PAYLOAD}
        return {"dtype": _SCALARS.get(self.kind, "string"), "_type": "Value"}

    def yaml(self) -> dict[str, Any]:
        """The column as a dataset card's ``dataset_info.features`` entry."""
        if self.kind == "image":
            return {"name": self.name, "dtype": "image"}
        if self.kind == "strings":
            return {"name": self.name, "list": "string"}
        if self.kind == "payload":
            return {"name": self.name, "struct": [Column(n, k, "").yaml() for n, k in _PAYLOAD]}
        return {"name": self.name, "dtype": _SCALARS.get(self.kind, "string")}


_PAYLOAD = (
    ("title", "string"),
    ("cover_text", "string"),
    ("epsilon", "float64"),
    ("variant", "int32"),
    ("claim", "json"),  # a claim probe's assertions (JSON), null for every other probe
)


def _payload_row(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload struct of a row: JSON-kind fields as JSON text."""
    out = {}
    for name, kind in _PAYLOAD:
        value = payload.get(name)
        out[name] = orjson.dumps(value).decode() if kind == "json" and value is not None else value
    return out


def _payload_record(struct: dict[str, Any]) -> dict[str, Any]:
    """The record's payload from a row's struct (an export made before a field existed lacks
    it: the record's default)."""
    return {
        name: orjson.loads(struct[name]) if kind == "json" else struct[name]
        for name, kind in _PAYLOAD
        if struct.get(name) is not None
    }


@dataclass(frozen=True)
class Table:
    """One config: its name, columns and the record model its rows rebuild."""

    name: str
    model: type[BaseModel]
    columns: tuple[Column, ...]

    def schema(self) -> Any:
        """The Arrow schema, with the features ``datasets`` reads from its metadata."""
        import pyarrow as pa

        features = {c.name: c.feature() for c in self.columns}
        meta = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
        return pa.schema([(c.name, c.arrow_type()) for c in self.columns], metadata=meta)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


_COMMON = (
    Column("id", "string", "instance id; an injected one is `<pair_of>.<target>.<probe>`"),
    Column("app", "string", "app name (shopping, food, hotel, ...)"),
    Column("category", "string", "task category"),
    Column("language", "string", "`en` or `zh`"),
    Column("instruction", "string", "the user's instruction"),
    Column("context", "strings", "prior steps shown to the agent"),
)
_TAIL = (
    Column("schema_version", "int32", "DIBench record schema version"),
    Column(
        "raw_line",
        "string",
        "the DIBench JSONL line verbatim, only where the columns "
        "do not rebuild it exactly (null for generated data)",
    ),
)

BENIGN = Table(
    "benign",
    DecisionState,
    (
        *_COMMON,
        Column("image", "image", "the screenshot (PNG, the dataset's own file bytes)"),
        Column("screenshot", "string", "the screenshot's path inside a DIBench dataset"),
        Column("width", "int32", "screenshot width in pixels"),
        Column("height", "int32", "screenshot height in pixels"),
        Column("acceptable", "strings", "candidate ids that satisfy the instruction, A(I, C)"),
        Column("seed", "int64", "the seed the state was drawn with"),
        Column("spec", "json", "machine-readable constraint spec (JSON)"),
        Column(
            "candidates", "json", "candidates: id, attributes, boxes, title_style, signals (JSON)"
        ),
        Column("ui", "json", "UI tree, uiautomator-style nodes (JSON)"),
        Column("styles", "json", "the app's text styles (JSON)"),
        Column("meta", "json", "generation details: query, package, attempt (JSON)"),
        *_TAIL,
    ),
)

INJECTED = Table(
    "injected",
    InjectedRecord,
    (
        *_COMMON,
        Column("pair_of", "string", "id of the benign state this variant pairs with"),
        Column("target", "string", "the candidate id carrying the injection (never acceptable)"),
        Column("probe", "string", "the injection probe"),
        Column("carriers", "strings", "what the probe writes on: `title` and/or `cover`"),
        Column(
            "patch",
            "image",
            "every changed pixel: the bounding rectangle of all pixels "
            "that differ from the benign screenshot (PNG)",
        ),
        Column("patch_x", "int32", "x offset of the patch on the screenshot"),
        Column("patch_y", "int32", "y offset of the patch on the screenshot"),
        Column("acceptable", "strings", "the benign state's acceptable set"),
        Column("seed", "int64", "the variant's seed (payload and composition)"),
        Column("payload", "payload", "what the probe put on the carriers"),
        Column("candidates", "json", "the benign state's candidates (JSON)"),
        Column(
            "position",
            "json",
            "the target's place in the list: 1-based rank, row and col, below_fold (JSON)",
        ),
        *_TAIL,
    ),
)

CONFIGS = (BENIGN, INJECTED)
PIXEL_COLUMNS = frozenset({"image", "patch", "patch_x", "patch_y"})  # filled by the exporter
_INT64 = (-(2**63), 2**63)


def line_to_row(table: Table, record: BaseModel, raw: bytes) -> dict[str, Any]:
    """A row of ``table`` from a validated record and its JSONL line (the caller adds the
    image and patch columns).

    Columns hold the record as DIBench reads it (defaults filled in); ``raw_line`` is set only
    where ``row_to_line`` would not give ``raw`` back byte for byte.
    """
    data = record.model_dump(mode="json")
    row: dict[str, Any] = {}
    for col in table.columns:
        if col.name in PIXEL_COLUMNS or col.kind == "payload" or col.name == "raw_line":
            continue
        value = data.get(col.name)
        if col.kind == "json":
            value = orjson.dumps(value).decode("utf-8")
        elif col.kind == "int64" and not _INT64[0] <= value < _INT64[1]:
            raise ValueError(f"field {col.name}: {value} does not fit a 64-bit integer")
        row[col.name] = value
    if table is INJECTED:
        row["payload"] = _payload_row(data["payload"])
    row["raw_line"] = None
    try:
        exact = row_to_line(table, row) == raw
    except ValueError:  # pydantic's ValidationError included
        exact = False
    if not exact:
        row["raw_line"] = raw.decode("utf-8")
    return row


def row_to_line(table: Table, row: dict[str, Any]) -> bytes:
    """The JSONL line a row came from, byte for byte (raises ValueError if it is invalid)."""
    if row.get("raw_line") is not None:
        return row["raw_line"].encode("utf-8")
    data: dict[str, Any] = {}
    for name, info in table.model.model_fields.items():
        if name not in row and not info.is_required():
            continue  # an export made before the column existed: the record's default
        value = row[name]
        col = next(c for c in table.columns if c.name == name)
        if col.kind == "payload" and value is not None:
            value = _payload_record(value)
        data[name] = orjson.loads(value) if col.kind == "json" and value is not None else value
    return dump_line(table.model.model_validate(data))
