"""Which plan of a file runs, where its task comes from, and how plan files are recognised."""

from __future__ import annotations

import pytest

import nodeloom
from nodeloom.formats import detect_format
from nodeloom.formats.plan import loader
from nodeloom.formats.plan.patterns import is_plan

PLAN_NODE = {"node_type": "llm-first", "node_name": "A", "thread_id": "main", "task_prompt": "go"}


def patterns(*names: str, task: str | None = None) -> dict:
    return {
        name: {**({"task": task} if task else {}), "nodes": [{**PLAN_NODE, "node_name": name}]}
        for name in names
    }


@pytest.mark.parametrize(
    "document",
    [
        {"nodes": [PLAN_NODE]},
        {"task": "t", "nodes": [PLAN_NODE]},
        patterns("a"),
        patterns("a", "b"),
    ],
    ids=["bare", "bare with task", "one pattern", "two patterns"],
)
def test_plan_files_are_detected_as_the_plan_format(document):
    assert detect_format(document) is loader


@pytest.mark.parametrize(
    "document",
    [
        {"nodes": [{"id": "a", "type": "chat-start"}], "edges": []},
        {"nodes": []},
        {"name": "x", "variables": {"a": 1}, "nodes": [{"id": "a", "type": "code"}]},
        {"format": "nodeloom", "nodes": [PLAN_NODE]},
    ],
    ids=["native", "empty", "native with variables", "declared native"],
)
def test_native_graphs_are_not_taken_for_plans(document):
    assert detect_format(document) is None


def test_a_file_with_one_pattern_runs_it_without_pattern():
    assert is_plan(patterns("only"))


async def test_a_file_with_several_patterns_runs_the_one_named_by_pattern(
    mock_llm, run_plan, thread_of
):
    mock_llm.script([{"reply": "ok"}])
    result = await run_plan(patterns("first", "second"), "task", pattern="second")

    assert list(result.outputs) == ["Start", "second", "Finish"]


def test_a_file_with_several_patterns_requires_pattern_and_lists_them(plan_issues):
    (issue,) = plan_issues(patterns("daily", "weekly"))

    assert issue.code == "missing_pattern"
    assert "2 patterns (daily, weekly)" in issue.message and "--pattern NAME" in issue.message


def test_an_unknown_pattern_is_reported_with_a_did_you_mean_and_the_list(plan_issues):
    (issue,) = plan_issues(patterns("daily", "weekly"), pattern="dayly")

    assert issue.code == "unknown_pattern"
    assert "did you mean 'daily'?" in issue.message and "patterns: daily, weekly" in issue.message


def test_pattern_given_for_a_bare_plan_is_an_error(plan_issues):
    (issue,) = plan_issues({"nodes": [PLAN_NODE]}, pattern="daily")

    assert issue.code == "unknown_pattern" and "no patterns" in issue.message


def test_only_the_chosen_pattern_is_checked(load_plan):
    document = {**patterns("good"), "broken": {"nodes": [{"node_type": "llm-first"}]}}

    flow = load_plan(document, pattern="good")

    assert [node.name for node in flow.graph.nodes][:3] == ["Start", "good", "Finish"]


async def test_a_patterns_task_starts_the_main_thread_when_the_run_has_no_message(
    mock_llm, run_plan, thread_of
):
    mock_llm.script([{"reply": "ok"}])
    result = await run_plan(patterns("daily", task="Summarise the day"))

    assert thread_of(result, "main")[0] == ("user", "Summarise the day")


async def test_the_run_message_wins_over_the_patterns_task(mock_llm, run_plan, thread_of):
    mock_llm.script([{"reply": "ok"}])
    result = await run_plan(patterns("daily", task="Summarise the day"), "Only the morning")

    assert thread_of(result, "main")[0] == ("user", "Only the morning")


async def test_a_bare_plan_takes_its_task_from_the_run_message(mock_llm, run_plan, thread_of):
    mock_llm.script([{"reply": "ok"}])
    result = await run_plan({"nodes": [PLAN_NODE]}, "the message")

    assert thread_of(result, "main")[0] == ("user", "the message")


async def test_a_plan_without_any_task_fails_before_any_llm_call(mock_llm, run_plan):
    result = await run_plan({"nodes": [PLAN_NODE]})

    assert result.error["code"] == "missing_task"
    assert "--input" in result.error["message"]
    assert mock_llm.requests == []


async def test_a_plan_may_be_written_in_yaml(mock_llm, plan_file):
    mock_llm.script([{"reply": "ok"}])
    path = plan_file(patterns("daily", task="from yaml"), name="plan.yaml")

    flow = nodeloom.load(path)
    async with flow:
        result = await flow.run()

    assert result.result["threads"]["main"][0]["content"] == "from yaml"


def test_other_fields_of_a_pattern_are_tolerated(load_plan):
    document = patterns("daily", task="t")
    document["daily"].update({"tools_limit": {"add": 1}, "description": "old GUI field"})

    assert load_plan(document)
