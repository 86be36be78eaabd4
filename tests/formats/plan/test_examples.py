"""The plan examples in examples/plan/ run with the commands their README gives, offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "plan"
TOOLS = ("--tools", str(EXAMPLES / "tools.py"))


def run(nodeloom_cli, *args: str) -> dict:
    done = nodeloom_cli("run", *args, *TOOLS, "--json")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_aggregation_example_collects_two_sources_into_one_summary(nodeloom_cli):
    result = run(
        nodeloom_cli,
        str(EXAMPLES / "aggregate.json"),
        "--mock-llm",
        str(EXAMPLES / "aggregate.mock.yaml"),
        "--input",
        "Compare the north's sales with the reviews",
    )["result"]

    summary = [m["content"] for m in result["threads"]["summary"]]
    assert summary[1] == 'North sales: {"region": "north", "units": 120}'
    assert summary[2].startswith("Reviews: ")
    assert result["content"].startswith("- The north sold 120 units")
    assert result["threads"]["main"][-1]["content"] == result["content"]


def test_the_daily_pattern_runs_a_tool_loop_within_its_quota(nodeloom_cli):
    result = run(
        nodeloom_cli,
        str(EXAMPLES / "daily.json"),
        "--pattern",
        "daily",
        "--var",
        "date=2026-01-07",
        "--mock-llm",
        str(EXAMPLES / "daily.mock.yaml"),
    )["result"]

    assert result["threads"]["main"][0]["content"] == "Summarise the shop's activity of 2026-01-07"
    looked_up = [m["content"] for m in result["threads"]["research"] if m["role"] == "tool"]
    assert looked_up == ["Kettle K2: 1.7 l, 2200 W, 39 EUR", "Toaster T4: 4 slots, 1500 W, 49 EUR"]
    assert result["content"].startswith("On 2026-01-07")


def test_the_sales_pattern_is_tool_only_and_its_content_is_the_raw_result(nodeloom_cli):
    result = run(
        nodeloom_cli, str(EXAMPLES / "daily.json"), "--pattern", "sales", "--var", "region=south"
    )

    assert result["result"]["content"] == {"region": "south", "units": 95}
    assert result["usage"] == {}
