"""plan.json through the real `nodeloom` command: run, validate and convert."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e

MOCK = """
rules:
  - match: {tools: [lookup], tool_result: false}
    tool_calls: [{name: lookup, arguments: {term: graphs}}]
  - match: {tool_result: lookup}
    reply: "Answer: {tool_result}"
  - reply: "plain"
"""


@pytest.fixture
def research(plan_file, step):
    return plan_file(
        {
            "research": {
                "task": "Research {topic}",
                "nodes": [
                    step(
                        "Fetch",
                        thread="facts",
                        initial_tool_name="get_a",
                        data_out=True,
                        data_out_description="Facts: ",
                    ),
                    step("Answer", prompt="{topic}", tools=["lookup"]),
                ],
            },
            "other": {"nodes": [step("Other", prompt="x")]},
        }
    )


def lines(done) -> list[dict]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_plan_runs_from_the_command_line_and_prints_its_result(
    nodeloom_cli, research, tools_file, tmp_path
):
    script = tmp_path / "s.mock.yaml"
    script.write_text(MOCK, encoding="utf-8")

    done = nodeloom_cli(
        "run",
        str(research),
        "--input",
        "Graphs",
        "--json",
        "--mock-llm",
        str(script),
        "--tools",
        str(tools_file()),
        "--var",
        "topic=graphs",
        "--pattern",
        "research",
    )

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = lines(done)[-1]
    assert result["type"] == "result" and result["status"] == "completed"
    assert result["result"]["content"] == "Answer: definition of graphs"
    assert set(result["result"]) == {"content", "threads", "data_out", "tokens_usage"}
    assert result["result"]["threads"]["main"][0] == {"role": "user", "content": "Graphs"}
    assert result["result"]["threads"]["main"][1] == {
        "role": "assistant",
        "content": 'Facts: {"source": "A", "value": 1}',
    }
    assert "plan" not in result.get("state", {})


def test_an_unknown_tool_exits_2_with_the_problem_located_before_anything_runs(
    nodeloom_cli, plan_file, step, tmp_path
):
    path = plan_file({"research": {"nodes": [step("A"), step("B"), step("C", tools=["lookup"])]}})

    done = nodeloom_cli("run", str(path), "--input", "x", "--json")

    assert done.returncode == 2
    (line,) = lines(done)
    assert line["status"] == "invalid"
    (error,) = line["errors"]
    assert error["code"] == "unknown_tool"
    assert error["field"] == "patterns.research.nodes[2].tools[0]"
    assert error["node_id"] == "nodes[2]"
    assert error["message"].startswith("node 2 ('C'): ")


def test_validate_names_each_faulty_node_by_its_index_and_node_name(nodeloom_cli, plan_file, step):
    path = plan_file({"nodes": [step("fetch_weather", prompt="x", tools=["lookup", 3])]})

    done = nodeloom_cli("validate", str(path))

    assert done.returncode == 2
    assert "node 0 ('fetch_weather'): 'tools.1' must be a string" in done.stdout + done.stderr


def test_several_patterns_without_pattern_exit_2_listing_them(nodeloom_cli, research):
    done = nodeloom_cli("validate", str(research), "--json")

    assert done.returncode == 2
    (error,) = lines(done)[0]["errors"]
    assert error["code"] == "missing_pattern" and "research, other" in error["message"]


def test_validate_accepts_a_valid_plan(nodeloom_cli, research, tools_file):
    done = nodeloom_cli(
        "validate",
        str(research),
        "--pattern",
        "research",
        "--var",
        "topic=t",
        "--tools",
        str(tools_file()),
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid" in done.stdout


def test_convert_writes_the_native_graph(nodeloom_cli, research, tools_file):
    done = nodeloom_cli(
        "convert",
        str(research),
        "--pattern",
        "research",
        "--var",
        "topic=t",
        "--tools",
        str(tools_file()),
    )

    assert done.returncode == 0, done.stderr
    graph = json.loads(done.stdout)
    assert [n["type"] for n in graph["nodes"]][:4] == [
        "plan-start",
        "plan-tool-first",
        "plan-llm-first",
        "plan-finish",
    ]


def test_a_run_without_a_task_fails_with_exit_1(nodeloom_cli, plan_file, step):
    path = plan_file({"nodes": [step("A", prompt="x")]})

    done = nodeloom_cli("run", str(path), "--json")

    assert done.returncode == 1
    result = lines(done)[-1]
    assert result["error"]["code"] == "missing_task"
