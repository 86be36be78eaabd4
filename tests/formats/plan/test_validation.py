"""Every field and rule of the seed's schema, checked before anything runs: each problem is
an issue with a stable code, located like `patterns.research.nodes[2].initial_tool_name`,
all reported at once."""

from __future__ import annotations

import pytest

from nodeloom.formats.plan.schema import PlanNode


def located(issues) -> list[tuple[str, str | None]]:
    return [(issue.code, issue.field) for issue in issues]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "node_type",
            "llm-frist",
            "must be 'llm-first' or 'tool-first', got 'llm-frist'; did you mean 'llm-first'?",
        ),
        ("node_name", 3, "'node_name' must be a string, got an integer 3"),
        ("thread_id", ["main"], "'thread_id' must be a string, got a list ['main']"),
        ("task_prompt", {"x": 1}, "'task_prompt' must be a string"),
        ("tools", "lookup", "'tools' must be a list, got a string 'lookup'"),
        ("enable_tool_loop", "yes", "'enable_tool_loop' must be true or false, got a string 'yes'"),
        ("tools_limit", [1], "'tools_limit' must be an object"),
        ("initial_tool_args", "term=x", "'initial_tool_args' must be an object"),
        ("data_in_thread", 1, "'data_in_thread' must be a string"),
        ("data_in_slice", [1], "'data_in_slice' is [start, end] (two integers or nulls), got [1]"),
        ("data_in_slice", "last", "'data_in_slice' must be a list"),
        ("data_out", 1, "'data_out' must be true or false, got an integer 1"),
        ("data_out_thread", False, "'data_out_thread' must be a string"),
        ("data_out_description", 5, "'data_out_description' must be a string"),
    ],
)
def test_a_field_of_the_wrong_type_is_located_and_explained(
    plan_issues, step, field, value, message
):
    node = {**step("A", prompt="x"), field: value}
    document = {"research": {"nodes": [step("Z"), node]}}

    (issue,) = plan_issues(document)

    assert issue.code == "invalid_plan"
    assert issue.field == f"patterns.research.nodes[1].{field}"
    assert issue.node_id == "nodes[1]"
    assert message in issue.message


@pytest.mark.parametrize("field", ["node_type", "node_name", "thread_id"])
def test_the_required_fields_are_required(plan_issues, step, field):
    node = step("A")
    del node[field]

    (issue,) = plan_issues({"nodes": [node]})

    assert located([issue]) == [("invalid_plan", f"nodes[0].{field}")]
    name = "node 0" if field == "node_name" else "node 0 ('A')"
    assert issue.message == f"{name}: '{field}' is required"


def test_every_issue_of_a_node_names_it_by_index_and_node_name(plan_issues, step):
    document = {
        "research": {
            "nodes": [
                step("Fetch", thread="facts", initial_tool_name="nope"),
                {**step("fetch_weather"), "tools": "lookup", "task_promt": "x"},
                {**step("Answer", prompt="{missing}"), "node_name": 7},
            ]
        }
    }

    issues = plan_issues(document)

    assert [issue.message.split(":")[0] for issue in issues] == [
        "node 0 ('Fetch')",
        "node 1 ('fetch_weather')",
        "node 1 ('fetch_weather')",
        "node 2",
        "node 2",
    ]


def test_items_of_lists_and_objects_are_located(plan_issues, step):
    node = step("A", tools=["lookup", 7], tools_limit={"lookup": 0})

    issues = plan_issues({"nodes": [node]})

    assert located(issues) == [
        ("invalid_plan", "nodes[0].tools[1]"),
        ("invalid_plan", "nodes[0].tools_limit.lookup"),
    ]
    assert "must be at least 1, got 0" in issues[1].message


def test_every_problem_of_the_file_is_reported_at_once(plan_issues, step):
    document = {
        "nodes": [
            {**step("A"), "data_out": "yes"},
            step("B", initial_tool_name="nope"),
            "not a node",
        ]
    }

    assert located(plan_issues(document)) == [
        ("invalid_plan", "nodes[0].data_out"),
        ("unknown_tool", "nodes[1].initial_tool_name"),
        ("invalid_plan", "nodes[2]"),
    ]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"nodes": []}, "got an empty list"),
        ({"task": 5, "nodes": [{"node_type": "llm-first"}]}, "'task' must be a string"),
    ],
)
def test_the_plan_itself_is_checked(plan_issues, document, message):
    issues = plan_issues({"p": document})

    assert any(message in issue.message for issue in issues)


def test_fields_the_original_gui_saves_are_tolerated(load_plan, step):
    gui = {
        "id": 2,
        "fixed": True,
        "thread_view_index": 1,
        "parent_id": 1,
        "parent_thread_id": "main",
        "temperature": 0.7,
        "top_p": 0.9,
        "enable_search": False,
        "enable_thinking": False,
        "created_by": "someone",
    }
    nulls = {
        "tools": None,
        "tools_limit": None,
        "enable_tool_loop": None,
        "initial_tool_name": None,
        "initial_tool_args": None,
        "data_in_thread": None,
        "data_in_slice": None,
        "data_out": None,
        "data_out_thread": None,
        "data_out_description": None,
        "task_prompt": None,
    }

    flow = load_plan({"custom": {"nodes": [{**step("A"), **gui, **nulls}]}})

    data = flow.graph.by_id["nodes[0]"].data
    assert data["data_in_thread"] == "main" and data["data_out_thread"] == "main"
    assert data["tools"] == [] and data["enable_tool_loop"] is False


def test_a_near_miss_of_a_schema_field_is_an_error_with_a_did_you_mean(plan_issues, step):
    issues = plan_issues({"nodes": [{**step("A"), "task_promt": "hello"}]})

    assert located(issues) == [("invalid_plan", "nodes[0].task_promt")]
    assert "did you mean 'task_prompt'?" in issues[0].message


def test_no_gui_field_is_a_near_miss_of_a_schema_field():
    from nodeloom.formats.plan.schema import GUI_FIELDS, _near_misses

    assert _near_misses(dict.fromkeys(GUI_FIELDS), "", 0) == []
    assert set(GUI_FIELDS).isdisjoint(PlanNode.model_fields)


# -- the seed's rules ----------------------------------------------------------------------


def test_rule_1_a_tool_first_node_requires_an_initial_tool(plan_issues):
    node = {"node_type": "tool-first", "node_name": "Fetch", "thread_id": "t"}

    (issue,) = plan_issues({"research": {"nodes": [node]}})

    assert located([issue]) == [("invalid_plan", "patterns.research.nodes[0].initial_tool_name")]
    assert "set 'initial_tool_name'" in issue.message


def test_rule_2_an_llm_first_node_with_an_initial_tool_is_an_error(plan_issues, step):
    node = {**step("Think"), "initial_tool_name": "lookup", "initial_tool_args": {"term": "x"}}

    issues = plan_issues({"nodes": [node]})

    assert located(issues) == [
        ("invalid_plan", "nodes[0].initial_tool_name"),
        ("invalid_plan", "nodes[0].initial_tool_args"),
    ]
    assert "or make the node a tool-first" in issues[0].message


def test_rule_3_an_empty_task_prompt_is_valid(load_plan, step):
    assert load_plan({"nodes": [step("Empty", prompt="")]})


def test_rule_4_a_new_thread_must_be_seeded_from_a_thread_that_exists_by_then(plan_issues, step):
    document = {
        "nodes": [
            step("Early", thread="b", data_in_thread="a"),
            step("Makes a", thread="a"),
            step("Again b", thread="b", data_in_thread="nowhere"),  # b exists: ignored
        ]
    }

    (issue,) = plan_issues(document)

    assert located([issue]) == [("invalid_plan", "nodes[0].data_in_thread")]
    assert "creates thread 'b' from thread 'a', which does not exist yet" in issue.message


def test_a_thread_made_by_data_out_may_seed_a_later_thread(load_plan, step):
    document = {
        "nodes": [
            step("Send", data_out=True, data_out_thread="report"),
            step("Read", thread="copy", data_in_thread="report"),
        ]
    }

    assert load_plan(document)


# -- tool names ----------------------------------------------------------------------------


def test_an_unknown_tool_is_an_error_with_a_did_you_mean_and_the_fix(plan_issues, step):
    issues = plan_issues({"nodes": [step("A", prompt="x", tools=["lokup"])]})

    assert located(issues) == [("unknown_tool", "nodes[0].tools[0]")]
    assert "unknown tool 'lokup'" in issues[0].message
    assert "--tools FILE" in issues[0].message


def test_an_unknown_tool_names_the_functions_of_the_tools_files(plan_issues, step, tools_file):
    issues = plan_issues({"nodes": [step("A", tools=["lokup"])]}, tools=[tools_file()])

    assert "did you mean 'lookup'?" in issues[0].message
    assert "functions of the --tools files: get_a, get_b, lookup" in issues[0].message


def test_a_built_in_toolset_name_is_not_a_tool_name(plan_issues, step):
    (issue,) = plan_issues({"nodes": [step("A", tools=["calculator"])]})

    assert issue.code == "unknown_tool"
    assert "'calculator' is a built-in toolset" in issue.message and "multiply" in issue.message


def test_tools_limit_names_known_tools_the_node_uses(plan_issues, step):
    node = step("A", tools=["add"], tools_limit={"add": 2, "multiply": 1, "zzz": 1})

    assert located(plan_issues({"nodes": [node]})) == [
        ("invalid_plan", "nodes[0].tools_limit.multiply"),
        ("unknown_tool", "nodes[0].tools_limit.zzz"),
    ]


def test_private_functions_of_a_tools_file_are_not_tools(plan_issues, step, tools_file):
    (issue,) = plan_issues({"nodes": [step("A", tools=["_helper"])]}, tools=[tools_file()])

    assert issue.code == "unknown_tool"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def broken(:\n    pass\n", "SyntaxError"),
        ("_private = 1\n\ndef _hidden():\n    pass\n", "defines no public function"),
    ],
)
def test_a_tools_file_that_offers_no_tool_is_an_error(
    plan_issues, step, tools_file, source, message
):
    (issue,) = plan_issues({"nodes": [step("A")]}, tools=[tools_file(source)])

    assert issue.code == "invalid_tools_file" and message in issue.message


def test_a_missing_tools_file_is_an_error(plan_issues, step, tmp_path):
    (issue,) = plan_issues({"nodes": [step("A")]}, tools=[tmp_path / "nope.py"])

    assert issue.code == "invalid_tools_file" and "no such file" in issue.message


def test_two_tools_files_defining_the_same_function_is_an_error(plan_issues, step, tools_file):
    files = [
        tools_file(),
        tools_file("def lookup(term: str) -> str:\n    return term\n", "more.py"),
    ]

    (issue,) = plan_issues({"nodes": [step("A")]}, tools=files)

    assert issue.code == "duplicate_tool" and "'lookup'" in issue.message


def test_reading_the_tools_files_runs_no_user_code(load_plan, step, tools_file):
    source = "raise SystemExit('imported!')\n\ndef probe() -> str:\n    return 'x'\n"

    flow = load_plan({"nodes": [step("A")]}, tools=[tools_file(source)])

    assert flow is not None
