"""Scorers: each compares a run's answer with a row's `expected` and gives a score from 0
to 1 with a reason. `exact`, `contains`, `json-subset`, `regex`, `numeric[:TOLERANCE]` and
`llm-judge` (a model grades the answer against a rubric)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Protocol

from nodeloom.evaluation.answer import text_of
from nodeloom.evaluation.dataset import Row
from nodeloom.testing.flowtest.matching import mismatches

NAMES = ("exact", "contains", "json-subset", "regex", "numeric", "llm-judge")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


class ScorerError(Exception):
    """A scorer that cannot be set up (an unknown name, a bad argument)."""


@dataclass(frozen=True)
class Score:
    value: float
    reason: str = ""


class Scorer(Protocol):
    name: str

    async def score(self, row: Row, answer: Any) -> Score: ...


def _passed(ok: bool, reason: str) -> Score:
    return Score(1.0 if ok else 0.0, "" if ok else reason)


@dataclass(frozen=True)
class Exact:
    name: str = "exact"

    async def score(self, row: Row, answer: Any) -> Score:
        want, got = text_of(row.expected).strip(), text_of(answer).strip()
        return _passed(want == got, f"expected {want[:120]!r}, got {got[:120]!r}")


@dataclass(frozen=True)
class Contains:
    name: str = "contains"

    async def score(self, row: Row, answer: Any) -> Score:
        want, got = text_of(row.expected), text_of(answer)
        return _passed(want in got, f"{want[:120]!r} not in {got[:120]!r}")


@dataclass(frozen=True)
class JsonSubset:
    """`expected` (an object, or its JSON text) is a subset of the answer, matched like a
    flow test's outputs (docs/testing.md#matching)."""

    name: str = "json-subset"

    async def score(self, row: Row, answer: Any) -> Score:
        expected, got = _json(row.expected), _json(answer)
        problems = mismatches(expected, got, "answer")
        return _passed(not problems, "; ".join(problems)[:300])


@dataclass(frozen=True)
class Regex:
    """`expected` is a regular expression found in the answer's text."""

    name: str = "regex"

    async def score(self, row: Row, answer: Any) -> Score:
        pattern, got = text_of(row.expected), text_of(answer)
        try:
            found = re.search(pattern, got) is not None
        except re.error as exc:
            return Score(0.0, f"row {row.id}: expected is not a regular expression: {exc}")
        return _passed(found, f"/{pattern}/ not found in {got[:120]!r}")


@dataclass(frozen=True)
class Numeric:
    """The answer (a number, or the first number in its text) is within `tolerance` of
    `expected`."""

    tolerance: float = 0.0
    name: str = "numeric"

    async def score(self, row: Row, answer: Any) -> Score:
        want, got = _number(row.expected), _number(answer)
        if want is None:
            return Score(0.0, f"row {row.id}: expected {row.expected!r} is not a number")
        if got is None:
            return Score(0.0, f"no number in the answer {text_of(answer)[:120]!r}")
        ok = math.isclose(want, got, rel_tol=0.0, abs_tol=self.tolerance)
        return _passed(ok, f"expected {want} ± {self.tolerance}, got {got}")


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    found = _NUMBER.search(text_of(value))
    return float(found.group()) if found else None
