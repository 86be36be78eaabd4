"""How a workflow becomes a native graph: every node an each-node, a step limit, handles and
fields mapped, prompts kept literal except {{PREVIOUS_OUTPUT}}."""

import pytest

from nodeloom.formats import read_graph
from nodeloom.formats.workflow.convert import literal, model_reference, user_prompt
from nodeloom.graph.validation import validate
from nodeloom.plugins.registry import default_registry


def native(document):
    graph, fmt = read_graph(document)
    assert fmt == "workflow"
    return graph


def nodes(graph):
    return {n["id"]: n for n in graph["nodes"]}


@pytest.fixture
def review(wf):
    return wf.doc(
        wf.start(initialInput="Draft a note"),
        wf.agent(
            "writer",
            agentName="Writer",
            systemPrompt="You write notes.",
            userPrompt="Improve: {{PREVIOUS_OUTPUT}}",
            model="gpt-5-mini",
            reasoningEffort="high",
            tools={"web_search": True, "subagents": True},
            collapsed=True,
        ),
        wf.agent("checker", agentName="Checker", userPrompt="ignored {{PREVIOUS_OUTPUT}}"),
        wf.if_node("check", ("contains", "note"), ("equal", "")),
        wf.approval("ok", prompt="Send it?"),
        wf.agent("send", agentName="Sender"),
        wf.agent("redo"),
        wf.link("start", "writer"),
        wf.subagent("writer", "checker"),
        wf.link("writer", "check"),
        wf.link("check", "ok", "condition-0"),
        wf.link("check", "redo", "false"),
        wf.link("ok", "send", "approve"),
        wf.link("ok", "redo", "reject"),
        name="Review",
    )


def test_the_converted_graph_is_valid_native(review):
    graph = native(review)
    assert validate(graph, default_registry()).issues == []
    assert graph["format"] == "nodeloom" and graph["name"] == "Review"


def test_every_node_is_an_each_node_and_the_graph_has_a_step_limit(review):
    graph = native(review)
    assert {n["data"]["activation"] for n in graph["nodes"]} == {"each"}
    assert graph["limits"] == {"max_steps": 1000}


def test_node_types_map_to_the_workflow_nodes_and_the_native_approval(review):
    types = {i: n["type"] for i, n in nodes(native(review)).items()}
    assert types == {
        "start": "workflow-start",
        "writer": "workflow-agent",
        "checker": "workflow-agent",
        "check": "workflow-if",
        "ok": "approval",
        "send": "workflow-agent",
        "redo": "workflow-agent",
    }


def test_positions_are_kept(wf):
    graph = native(wf.doc({"id": "s", "type": "start", "x": 12, "y": -3.5, "data": {}}))
    assert graph["nodes"][0]["position"] == {"x": 12, "y": -3.5}


def test_the_agent_fields_map_to_parameters(review):
    writer = nodes(native(review))["writer"]["data"]
    assert writer == {
        "activation": "each",
        "name": "Writer",
        "system_prompt": "You write notes.",
        "user_prompt": "Improve: {{ $json }}",
        "model": "openai:gpt-5-mini",
        "reasoning_effort": "high",
        "web_search": True,
        "subagents": True,
    }


def test_an_agent_without_fields_gets_the_seeds_defaults(review):
    redo = nodes(native(review))["redo"]["data"]
    assert redo == {
        "activation": "each",
        "system_prompt": "You are a helpful assistant.",
        "model": "openai:gpt-5",
        "web_search": False,
        "subagents": False,
    }


def test_a_subagents_user_prompt_is_left_out_its_parents_call_is_its_prompt(review):
    assert "user_prompt" not in nodes(native(review))["checker"]["data"]


def test_start_if_and_approval_fields_map(review):
    graph = nodes(native(review))
    assert graph["start"]["data"]["initial_input"] == "Draft a note"
    assert graph["check"]["data"]["conditions"] == [
        {"operator": "contains", "value": "note"},
        {"operator": "equal", "value": ""},
    ]
    assert graph["ok"]["data"]["prompt"] == "Send it?"


def test_execution_edges_keep_their_handles_and_enter_input(review):
    edges = {
        (e["source"], e["sourceHandle"], e["target"], e["targetHandle"])
        for e in native(review)["edges"]
    }
    assert {
        ("start", "output", "writer", "input"),
        ("writer", "output", "check", "input"),
        ("check", "condition-0", "ok", "input"),
        ("check", "false", "redo", "input"),
        ("ok", "approve", "send", "input"),
        ("ok", "reject", "redo", "input"),
    } < edges


def test_a_subagent_link_becomes_a_wire_from_the_child_into_the_parents_tools(review):
    [wire] = [e for e in native(review)["edges"] if e["id"] == "connections[1]"]
    assert (wire["source"], wire["sourceHandle"], wire["target"], wire["targetHandle"]) == (
        "checker",
        "agent",
        "writer",
        "tools",
    )


def test_a_missing_handle_from_start_or_agent_is_output(wf):
    graph = native(wf.doc(wf.start(), wf.agent("a"), wf.link("start", "a", None, None)))
    assert graph["edges"][0]["sourceHandle"] == "output"
    assert graph["edges"][0]["targetHandle"] == "input"


def test_nodes_the_start_does_not_reach_are_left_out_and_named(wf):
    graph = native(
        wf.doc(
            wf.start(),
            wf.agent("a"),
            wf.agent("orphan"),
            wf.agent("b"),
            wf.link("start", "a"),
            wf.link("orphan", "b"),
        )
    )
    assert set(nodes(graph)) == {"start", "a"}
    assert "Left out" in graph["description"] and "orphan, b" in graph["description"]


def test_repeated_agent_names_stay_unique(wf):
    graph = native(
        wf.doc(
            wf.start(),
            wf.agent("a", agentName="Agent"),
            wf.agent("b", agentName="Agent"),
            wf.agent("c", agentName="a"),
            wf.link("start", "a"),
            wf.link("start", "b"),
            wf.link("start", "c"),
        )
    )
    names = {i: n["data"].get("name") for i, n in nodes(graph).items()}
    assert names == {"start": None, "a": "Agent (a)", "b": "Agent (b)", "c": "a (c)"}


@pytest.mark.parametrize(
    "name, reference",
    [
        ("gpt-5", "openai:gpt-5"),
        (" gpt-4o-mini ", "openai:gpt-4o-mini"),
        ("", "openai:gpt-5"),
        (None, "openai:gpt-5"),
        ("anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
        ("openai-compatible:qwen", "openai-compatible:qwen"),
        ("ft:gpt-4o-mini:acme::abc", "openai:ft:gpt-4o-mini:acme::abc"),
    ],
)
def test_bare_model_names_are_openai_models(name, reference):
    assert model_reference(name) == reference


def test_previous_output_reads_the_input_and_other_braces_stay_literal():
    assert user_prompt("{{PREVIOUS_OUTPUT}}") == "{{ $json }}"
    assert user_prompt("A {{x}} B {{PREVIOUS_OUTPUT}} C") == "A {{ '{{' }}x}} B {{ $json }} C"
    assert literal("{{{ no }}") == "{{ '{{' }}{ no }}"


@pytest.mark.parametrize("text", ["{{x}}", "{{ $json }}", "a {{{{ b }} }}", "}} {{", "{{PREVIOUS"])
def test_literal_text_renders_back_to_itself(text):
    from nodeloom.expressions.template import compile_template

    class Scope:
        def lookup(self, name):
            raise KeyError(name)

        def node(self, ref):
            raise KeyError(ref)

    assert compile_template(literal(text)).render(Scope()) == text
