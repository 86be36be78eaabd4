"""The native graph a plan becomes: a chain of plan-* nodes, Toolsets for its tools, the
model from NODELOOM_PLAN_MODEL, names unique and text kept literal."""

from __future__ import annotations

import json

import pytest

import nodeloom
from nodeloom.formats import FormatOptions, read_graph
from nodeloom.formats.plan.convert import DEFAULT_MODEL, MODEL_VARIABLE


@pytest.fixture
def convert(plan_file):
    def run(document, **options):
        path = plan_file(document)
        tools = tuple(str(t) for t in options.pop("tools", ()))
        graph, kind = read_graph(path, FormatOptions(tools=tools, base_dir=path.parent, **options))
        assert kind == "plan"
        return graph

    return run


def spine(graph) -> list[str]:
    edges = {e["source"]: e["target"] for e in graph["edges"] if e["targetHandle"] == "input"}
    order, current = ["start"], "start"
    while current in edges:
        current = edges[current]
        order.append(current)
    return order


def test_a_plan_becomes_a_chain_from_plan_start_to_plan_finish_in_the_plans_order(
    convert, step, tools_file
):
    graph = convert(
        {"daily": {"task": "T", "nodes": [step("A"), step("B", initial_tool_name="get_b")]}},
        tools=[tools_file()],
    )

    assert graph["name"] == "daily"
    assert spine(graph) == ["start", "nodes[0]", "nodes[1]", "finish"]
    types = {node["id"]: node["type"] for node in graph["nodes"]}
    assert types == {
        "start": "plan-start",
        "nodes[0]": "plan-llm-first",
        "nodes[1]": "plan-tool-first",
        "finish": "plan-finish",
        "tools": "toolset",
    }
    start = graph["nodes"][0]
    assert start["data"] == {"name": "Start", "task": "T"}


def test_tools_reach_the_nodes_that_use_them_through_toolsets(convert, step, tools_file):
    path = tools_file()
    graph = convert(
        {
            "nodes": [
                step("Fetch", initial_tool_name="get_a", tools=["multiply"]),
                step("Plain"),
                step("Sum", tools=["add", "current_datetime"]),
            ]
        },
        tools=[path],
    )

    nodes = {node["id"]: node for node in graph["nodes"]}
    assert nodes["tools"]["data"]["functions"] == [f"{path}#get_a", f"{path}#add"]
    assert nodes["builtin-tools"]["data"]["toolsets"] == ["calculator", "datetime"]
    wires = sorted(
        (e["source"], e["target"]) for e in graph["edges"] if e["targetHandle"] == "tools"
    )
    assert wires == [
        ("builtin-tools", "nodes[0]"),
        ("builtin-tools", "nodes[2]"),
        ("tools", "nodes[0]"),
        ("tools", "nodes[2]"),
    ]


def test_a_plan_without_tools_has_no_toolset(convert, step):
    graph = convert({"nodes": [step("A", prompt="x")]})

    assert [node["type"] for node in graph["nodes"]] == [
        "plan-start",
        "plan-llm-first",
        "plan-finish",
    ]


def test_every_field_of_a_plan_node_becomes_a_parameter_with_defaults_applied(convert, step):
    graph = convert({"nodes": [step("A", thread="t", prompt="p", tools=None, data_out=True)]})

    assert graph["nodes"][1]["data"] == {
        "name": "A",
        "thread_id": "t",
        "task_prompt": "p",
        "tools": [],
        "enable_tool_loop": False,
        "tools_limit": {},
        "data_in_thread": "main",
        "data_in_slice": None,
        "data_out": True,
        "data_out_thread": "main",
        "data_out_description": "",
        "model": DEFAULT_MODEL,
    }


def test_repeated_node_names_are_made_unique(convert, step):
    graph = convert({"nodes": [step("Fetch"), step("Fetch"), step("Start"), step("finish")]})

    names = [node["data"]["name"] for node in graph["nodes"]]
    assert names == ["Start (2)", "Fetch", "Fetch (2)", "Start", "finish (2)", "Finish"]


def test_double_braces_in_text_are_escaped_so_the_engine_keeps_them_literal(convert, step):
    graph = convert({"nodes": [step("A", prompt="keep {{ this }}")]})

    assert graph["nodes"][1]["data"]["task_prompt"] == "keep {{ '{{' }} this }}"


def test_the_model_comes_from_nodeloom_plan_model(convert, step, monkeypatch):
    monkeypatch.setenv(MODEL_VARIABLE, "anthropic:claude-sonnet-4-5")

    graph = convert({"nodes": [step("A", prompt="x")]})

    assert graph["nodes"][1]["data"]["model"] == "anthropic:claude-sonnet-4-5"


def test_a_malformed_nodeloom_plan_model_is_reported_before_anything_runs(
    plan_issues, step, monkeypatch
):
    monkeypatch.setenv(MODEL_VARIABLE, "gpt-4o")

    (issue,) = plan_issues({"nodes": [step("A")]})

    assert (issue.code, issue.field) == ("model_not_configured", MODEL_VARIABLE)
    assert "'openai:gpt-4o'" in issue.message


async def test_every_llm_call_of_the_plan_uses_that_model(mock_llm, run_plan, step, monkeypatch):
    monkeypatch.setenv(MODEL_VARIABLE, "openai:gpt-4.1-nano")
    mock_llm.script([{"reply": "ok"}])

    await run_plan({"nodes": [step("A", prompt="x"), step("B", prompt="y")]}, "task")

    assert [request.model for request in mock_llm.requests] == ["gpt-4.1-nano"] * 2


async def test_by_default_the_plan_uses_openai_gpt_4o_mini(mock_llm, run_plan, step):
    mock_llm.script([{"reply": "ok"}])

    await run_plan({"nodes": [step("A", prompt="x")]}, "task")

    assert DEFAULT_MODEL == "openai:gpt-4o-mini"
    assert mock_llm.requests[0].model == "gpt-4o-mini"


async def test_the_converted_graph_reads_back_as_a_native_graph_and_runs_the_same(
    mock_llm, convert, step, tools_file, tmp_path
):
    mock_llm.script([{"reply": "ok"}])
    converted = convert(
        {"nodes": [step("Fetch", initial_tool_name="get_a"), step("Say", prompt="go")]},
        tools=[tools_file()],
    )
    path = tmp_path / "converted.json"
    path.write_text(json.dumps(converted), encoding="utf-8")

    assert read_graph(path)[1] == "native"
    flow = nodeloom.load(path)
    async with flow:
        result = await flow.run("task")

    assert result.result["content"] == "ok"
    assert result.result["threads"]["main"][2]["content"] == '{"source": "A", "value": 1}'
