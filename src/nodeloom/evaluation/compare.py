"""Two evaluations side by side, row by row (matched by row id)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Pair:
    id: str
    input: Any
    expected: Any
    a: dict[str, Any] | None
    b: dict[str, Any] | None


def pair_rows(a: dict[str, Any], b: dict[str, Any]) -> list[Pair]:
    """Rows of both, in A's order then B's extra rows; a row only one has pairs with None."""
    rows_a = {row["id"]: row for row in a["rows"]}
    rows_b = {row["id"]: row for row in b["rows"]}
    order = list(rows_a) + [i for i in rows_b if i not in rows_a]
    pairs = []
    for row_id in order:
        first = rows_a.get(row_id) or rows_b[row_id]
        pairs.append(
            Pair(row_id, first["input"], first["expected"], rows_a.get(row_id), rows_b.get(row_id))
        )
    return pairs


def mean_score(row: dict[str, Any] | None) -> float | None:
    """The mean of a row's scores (None for a missing row)."""
    if row is None or not row["scores"]:
        return None
    values = [s["score"] for s in row["scores"].values()]
    return sum(values) / len(values)


def tally(pairs: list[Pair]) -> dict[str, int]:
    """How many rows B scores better, worse or the same as A."""
    counts = {"better": 0, "worse": 0, "same": 0, "unpaired": 0}
    for pair in pairs:
        a, b = mean_score(pair.a), mean_score(pair.b)
        if a is None or b is None:
            counts["unpaired"] += 1
        elif b > a:
            counts["better"] += 1
        elif b < a:
            counts["worse"] += 1
        else:
            counts["same"] += 1
    return counts
