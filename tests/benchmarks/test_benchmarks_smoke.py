"""The benchmark suite runs end to end in its quick mode and reports every figure.

No timing is asserted here: the speed targets live in `python -m benchmarks`, not in
unit tests (a loaded CI machine would make them flaky).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nodeloom.testing.browser import chromium

ROOT = Path(__file__).resolve().parents[2]

FIGURE_KEYS = {
    "chain.per_node.n=10",
    "chain.overhead.n=10",
    "chain.per_node.n=100",
    "chain.overhead.n=100",
    "chain.per_node.n=1000",
    "chain.overhead.n=1000",
    "chain.spread",
    "fan_out.wall",
    "concurrent.wall",
    "concurrent.throughput",
    "concurrent.in_flight",
    "concurrent.retained",
    "load.dict",
    "load.file",
    "agent.turn",
    "agent.turn.added",
    "agent.ttft",
    "agent.ttft.added",
    "checkpoint.sqlite.per_node",
    "checkpoint.sqlite.bytes",
    "checkpoint.postgres.per_node",
    "checkpoint.postgres.bytes",
    "recorded.unrecorded",
    "recorded.sqlite.throughput",
    "recorded.sqlite.fixed",
    "recorded.postgres.throughput",
    "recorded.postgres.fixed",
    "server.throughput",
    "server.ttfe.p50",
    "server.ttfe.p99",
    "fleet.inprocess.throughput",
    *(
        f"fleet.w{n}.{figure}"
        for n in (1, 2)
        for figure in ("throughput", "cpu", "pg_statements", "redis_round_trips")
    ),
    "fleet.w2.scaling",
}
# The browser benchmark runs where Chromium is installed (CI installs it), else says why not.
HAS_BROWSER = chromium() is not None
if HAS_BROWSER:
    FIGURE_KEYS |= {"browser.open", "browser.drag"}
TARGETS = [1, 2, 3, 4, 5, 6, 7, 10, 8, 11, *([9] if HAS_BROWSER else [])]
# Figures computed from others (engine minus floor, max over min): no floor of their own.
DERIVED = {
    "chain.overhead.n=10",
    "chain.overhead.n=100",
    "chain.overhead.n=1000",
    "chain.spread",
    "agent.turn.added",
    "agent.ttft.added",
    "fleet.w2.scaling",
}


def benchmarks(*options: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", *options],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=170,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.timeout(400)  # the suite twice; its fleet part starts ~10 processes (~30 s)
def test_the_quick_mode_exits_0_and_prints_every_figure_and_target() -> None:
    machine = benchmarks("--json")
    assert machine.returncode == 0, machine.stderr
    results = json.loads(machine.stdout)
    figures = {f["key"]: f for f in results["figures"]}
    assert set(figures) == FIGURE_KEYS
    for figure in figures.values():
        assert isinstance(figure["value"], float), figure
        if figure["key"] not in DERIVED:
            assert figure["floor"] is not None, figure["key"]
    assert [t["number"] for t in results["targets"]] == TARGETS

    human = benchmarks()
    assert human.returncode == 0, human.stderr
    for figure in figures.values():
        assert figure["label"] in human.stdout
    for target in results["targets"]:
        assert target["target"] in human.stdout
    assert "QUICK MODE" in human.stdout
