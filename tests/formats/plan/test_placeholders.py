"""`{placeholder}` substitution from --var: every string of the chosen plan, `{{name}}` for a
literal, and an error for a placeholder without a value."""

from __future__ import annotations

from nodeloom.formats.plan.placeholders import fill


async def test_placeholders_are_filled_from_the_variables_in_every_string(
    mock_llm, run_plan, step, tools_file, thread_of
):
    mock_llm.script([{"reply": "ok"}])
    document = {
        "daily": {
            "task": "Summarise {date}",
            "nodes": [
                step(
                    "Look up {date}",
                    thread="{who}",
                    initial_tool_name="lookup",
                    initial_tool_args={"term": "{date}"},
                    prompt="Report on {date} for {who}",
                    data_out=True,
                    data_out_description="{who}: ",
                )
            ],
        }
    }
    result = await run_plan(
        document, variables={"date": "2026-01-07", "who": "ada"}, tools=[tools_file()]
    )

    assert thread_of(result, "main") == [
        ("user", "Summarise 2026-01-07"),
        ("assistant", "ada: ok"),
    ]
    assert thread_of(result, "ada")[2] == ("tool", "definition of 2026-01-07")
    assert mock_llm.requests[0].last_message == "Report on 2026-01-07 for ada"
    assert "Look up 2026-01-07" in result.outputs


def test_a_placeholder_without_a_value_is_an_error_located_at_its_field(plan_issues, step):
    document = {"daily": {"nodes": [step("A", prompt="on {date} and {day}")]}}

    issues = plan_issues(document, variables={"date": "today"})

    assert [(i.code, i.field, i.node_id) for i in issues] == [
        ("unknown_placeholder", "patterns.daily.nodes[0].task_prompt", "nodes[0]")
    ]
    assert "--var day=VALUE" in issues[0].message and "variables given: date" in issues[0].message


def test_double_braces_write_a_literal_placeholder_and_other_braces_are_left_alone():
    filled, issues = fill(
        {"a": 'Use {{date}} as written; JSON {"k": 1}; { spaced }; {date}'}, {"date": "D"}, ""
    )

    assert issues == []
    assert filled == {"a": 'Use {date} as written; JSON {"k": 1}; { spaced }; D'}


async def test_text_with_double_braces_reaches_the_model_as_written(mock_llm, run_plan, step):
    mock_llm.script([{"reply": "ok"}])
    prompt = "Fill the template {{ name }} and {{name}}, literally"
    await run_plan({"nodes": [step("A", prompt=prompt)]}, "task")

    assert mock_llm.requests[0].last_message == "Fill the template {{ name }} and {name}, literally"


def test_keys_are_not_placeholders():
    filled, issues = fill({"{key}": "{v}"}, {"v": "1"}, "")

    assert filled == {"{key}": "1"} and issues == []
