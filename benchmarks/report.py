"""Figures, verdicts, and how they are printed: a table for people, JSON for machines.

Ratio: how many times the floor's cost the engine's cost is (time or memory); for a
throughput, the floor's runs/s divided by the engine's. 1 KB = 1,000 bytes.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# The targets, in the words.
TARGETS = {
    1: "Engine overhead per node on chains of trivial nodes ≤ 15 µs, and flat in N: "
    "N = 10, 100, 1,000, 10,000 within 1.5× of each other",  # noqa: RUF001 (the issue's sign)
    2: "A 1,000-way fan-out of branches that each await 50 ms finishes in ≤ 75 ms wall",
    3: "10,000 concurrent runs of a 3-node flow whose middle node awaits 50 ms, in one "
    "process: ≥ 5,000 runs/s and ≤ 10 KB of memory growth per run",
    4: "Load + validate of a 10,000-node graph ≤ 0.2 s",
    5: "What nodeloom adds to an agent turn compared with calling the same Agno agent "
    "directly against the scripted server: ≤ 5 ms per turn",
    6: "What nodeloom adds to time-to-first-token: ≤ 2 ms",
    7: "Recording a run (events and a checkpoint per node) on SQLite, on a 1,000-node "
    "chain: ≤ 0.3 ms per node; Postgres and storage bytes per node reported",
    8: "200 concurrent runs of an agent flow through `nodeloom serve` (SQLite), each "
    "started over HTTP and streamed to its own SSE client: every event delivered, seq "
    "contiguous from 1; runs/s and p50/p99 time to first event reported",
    9: "The web UI: a 500-node flow opens in ≤ 2 s and a node drag keeps ≥ 30 frames per second",
    10: "Recorded runs: ≥ 1,500 runs/s at 1,000 concurrent 3-node runs on SQLite and on "
    "Postgres in one process, and ≤ 1 ms fixed cost per recorded run (the unrecorded "
    "figure beside them)",
    11: "The worker fleet (serve --queue, Dramatiq on Redis, Postgres store): every run of "
    "an I/O-bound 5-node flow completes exactly once; 2 workers ≥ 1.8× and 4 workers ≥ 3.2× "  # noqa: RUF001
    "the runs/s of 1 worker; CPU per run of all processes ≤ 2× the in-process server's; "  # noqa: RUF001
    "Postgres and Redis round trips per run reported",
}

TIMES = "\N{MULTIPLICATION SIGN}"  # the unit of a ratio

_PRECISION = {"": 1, "µs": 2, "ms": 1, "s": 3, "runs/s": 0, "fps": 0, "KB": 2, TIMES: 2}


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured figure, beside its floor (the same work in plain Python)."""

    key: str  # stable id, e.g. "chain.overhead.n=10"
    label: str
    value: float
    unit: str
    floor: float | None = None
    higher_is_better: bool = False
    ratio_shown: bool = True  # False where both sides are noise around zero
    target: str = ""  # the bound this figure is held to, e.g. "≤ 15 µs"; "" for none
    passed: bool | None = None

    @property
    def ratio(self) -> float | None:
        if not self.ratio_shown or self.floor is None or self.floor <= 0 or self.value <= 0:
            return None
        return self.floor / self.value if self.higher_is_better else self.value / self.floor

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "value": self.value,
            "unit": self.unit,
            "floor": self.floor,
            "ratio": self.ratio,
            "target": self.target or None,
            "passed": self.passed,
        }


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether one of the issue's targets is met, and on which figures it was judged."""

    number: int
    passed: bool
    judged_on: str

    @property
    def target(self) -> str:
        return TARGETS[self.number]

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "target": self.target,
            "passed": self.passed,
            "judged_on": self.judged_on,
        }


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "executable": sys.executable,
    }


def verdict_word(passed: bool | None) -> str:
    return "" if passed is None else "PASS" if passed else "FAIL"


def amount(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    digits = _PRECISION.get(unit, 2)
    space = "" if unit == TIMES else " "
    return f"{value:,.{digits}f}{space}{unit}"


def table(figures: Sequence[Figure]) -> str:
    header = ("Figure", "Engine", "Floor", "Ratio", "Target", "Result")
    rows = [header]
    for f in figures:
        ratio = f"{f.ratio:,.1f}{TIMES}" if f.ratio is not None else "—"
        rows.append(
            (
                f.label,
                amount(f.value, f.unit),
                amount(f.floor, f.unit),
                ratio,
                f.target,
                verdict_word(f.passed),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            cell.ljust(width) if i in (0, 4, 5) else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def text(figures: Sequence[Figure], verdicts: Sequence[Verdict], *, quick: bool) -> str:
    info = machine()
    parts = [
        f"nodeloom benchmarks: Python {info['python']} ({info['implementation']}), "
        f"{info['cpus']} CPUs, {info['platform']}",
        "Events are emitted in every run (sink=nodeloom.NullSink()); ratio = engine ÷ floor.",
    ]
    if quick:
        parts.append(
            "QUICK MODE: sizes are reduced, so the verdicts below are a smoke check, "
            "not the targets' verdicts."
        )
    parts += ["", table(figures), "", "Targets:"]
    for v in verdicts:
        parts.append(f"  [{verdict_word(v.passed)}] {v.number}. {v.target}")
        parts.append(f"         judged on: {v.judged_on}")
    failed = [v.number for v in verdicts if not v.passed]
    parts.append("")
    parts.append(
        f"FAIL: target(s) {', '.join(map(str, failed))} not met" if failed else "All targets met."
    )
    return "\n".join(parts)


def as_json(figures: Sequence[Figure], verdicts: Sequence[Verdict], *, quick: bool) -> str:
    document = {
        "quick": quick,
        "machine": machine(),
        "figures": [f.to_json() for f in figures],
        "targets": [v.to_json() for v in verdicts],
    }
    return json.dumps(document, indent=2, ensure_ascii=False)
