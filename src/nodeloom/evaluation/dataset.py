"""Evaluation datasets: JSONL or CSV rows of an input and what the flow should answer."""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class DatasetError(Exception):
    """A dataset that cannot be read: the message names the file, the row and the fix."""


@dataclass(frozen=True)
class Row:
    """One case: `input` is the message, `expected` what a scorer compares the answer to."""

    id: str
    input: Any
    expected: Any = None
    inputs: dict[str, Any] | None = None
    trigger: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Dataset:
    path: Path
    rows: tuple[Row, ...]
    digest: str  # sha256 of the file, so two evaluations can tell they used the same rows


_KNOWN = ("id", "input", "expected", "inputs", "trigger")


def read_dataset(path: str | Path) -> Dataset:
    """Rows from a `.jsonl` file (one JSON object per line) or a `.csv` file (a header
    row); each needs `input`, and may have `expected`, `id`, `inputs`, `trigger`."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read the dataset {path}: {exc}") from None
    text = raw.decode("utf-8-sig", errors="replace")
    if path.suffix.lower() == ".csv":
        records = [(i + 2, dict(r)) for i, r in enumerate(csv.DictReader(text.splitlines()))]
        records = [(n, {k: _cell(k, v) for k, v in r.items() if k}) for n, r in records]
    elif path.suffix.lower() in (".jsonl", ".ndjson"):
        records = _json_lines(path, text)
    else:
        raise DatasetError(f"{path}: a dataset is a .jsonl or a .csv file")
    rows = tuple(_row(path, line, record, index) for index, (line, record) in enumerate(records))
    if not rows:
        raise DatasetError(f"{path} has no rows")
    ids = [row.id for row in rows]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise DatasetError(f"{path}: ids must be unique; repeated: {', '.join(twice)}")
    return Dataset(path, rows, hashlib.sha256(raw).hexdigest())


def _json_lines(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise DatasetError(f"{path}:{number}: each line is a JSON object with `input`")
        records.append((number, record))
    return records


def _cell(column: str, value: str | None) -> Any:
    """CSV cells are text; `expected`, `inputs` and `trigger` are read as JSON when they
    are JSON (`42`, `{"a": 1}`), else kept as text."""
    if value is None or column not in ("expected", "inputs", "trigger"):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _row(path: Path, line: int, record: dict[str, Any], index: int) -> Row:
    if "input" not in record:
        columns = ", ".join(record) or "none"
        raise DatasetError(f"{path}:{line}: no `input` (it has: {columns})")
    for key in ("inputs", "trigger"):
        if record.get(key) is not None and not isinstance(record[key], dict):
            raise DatasetError(f"{path}:{line}: `{key}` is a JSON object")
    return Row(
        id=str(record.get("id") or index + 1),
        input=record["input"],
        expected=record.get("expected"),
        inputs=record.get("inputs"),
        trigger=record.get("trigger"),
        extra={k: v for k, v in record.items() if k not in _KNOWN},
    )
