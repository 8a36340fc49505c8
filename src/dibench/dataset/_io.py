"""Reading and writing JSONL records with errors that name the file, line and field."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from dibench._errors import DIBenchError, field_error
from dibench._fs import StrPath

__all__ = ["DatasetError", "dump_line", "json_object", "parse_record", "read_jsonl"]

M = TypeVar("M", bound=BaseModel)


class DatasetError(DIBenchError, ValueError):
    """A dataset file is missing, corrupt or inconsistent; the message names file, line, field."""


def json_object(raw: bytes | str, where: str, what: str = "a record") -> dict[str, Any]:
    """``raw`` parsed as a JSON object, or a DatasetError naming ``where`` (file or file:line)."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DatasetError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: {what} must be a JSON object")
    return data


def parse_record(model: type[M], raw: bytes | str, path: Path | str, line: int) -> M:
    """Validate one JSON line into ``model`` or raise DatasetError naming file:line and field."""
    data = json_object(raw, f"{path}:{line}")
    version = data.get("schema_version")
    if version != 1:
        raise DatasetError(
            f"{path}:{line}: field schema_version: unsupported value {version!r} "
            "(this DIBench reads 1)"
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise DatasetError(f"{path}:{line}: {field_error(exc)}") from None


def read_jsonl(path: StrPath, model: type[M]) -> Iterator[M]:
    """Yield validated records of a JSONL file; blank lines are skipped."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if raw.strip():
                yield parse_record(model, raw, path, lineno)


def dump_line(record: BaseModel) -> bytes:
    """One compact, deterministic JSON line (field order is the model's)."""
    return record.model_dump_json().encode("utf-8") + b"\n"


def write_jsonl(path: Path, records: Iterable[BaseModel]) -> int:
    n = 0
    with path.open("wb") as fh:
        for r in records:
            fh.write(dump_line(r))
            n += 1
    return n
