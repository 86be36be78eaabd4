"""The workflow's log entries, read back from real runs with `logs(events)`."""

import json

import nodeloom
from nodeloom import RunSettings
from nodeloom.formats.workflow import logs
from nodeloom.formats.workflow.log import LOG_TYPES

SCRIPT = [
    {
        "match": {"system": "Lead.", "tool_result": False},
        "tool_calls": [
            {"name": "subagent_helper_helper", "arguments": {"input": "help"}},
            {"name": "subagent_broken_broken", "arguments": {"input": "help"}},
        ],
    },
    {"match": {"system": "Helper."}, "reply": "helped"},
    {"match": {"system": "Broken."}, "error": {"status": 400, "message": "broken on purpose"}},
    {"match": {"system": "Lead."}, "reply": "all done"},
    {"match": {"system": "Failing."}, "error": {"status": 400, "message": "no model today"}},
]


def everything(wf):
    """Every kind of step, so one run (and a resume) logs every entry type but `error`."""
    return wf.doc(
        wf.start(initialInput="start here"),
        wf.agent("lead", systemPrompt="Lead.", tools={"subagents": True}),
        wf.agent("helper", agentName="Helper", systemPrompt="Helper."),
        wf.agent("broken", agentName="Broken", systemPrompt="Broken."),
        wf.if_node("check", ("contains", "done")),
        wf.approval("ok"),
        wf.agent("failing", systemPrompt="Failing."),
        wf.link("start", "lead"),
        wf.subagent("lead", "helper"),
        wf.subagent("lead", "broken"),
        wf.link("lead", "check"),
        wf.link("check", "ok", "condition-0"),
        wf.link("ok", "failing", "reject"),
    )


async def test_every_log_type_is_readable_from_real_runs(wf, load, mock_llm):
    mock_llm.script(SCRIPT)
    flow = load(everything(wf))
    sink = nodeloom.ListSink()
    paused = await flow.run(sink=sink)
    await flow.resume(paused.run_id, "ok", {"decision": "reject", "note": "not now"})
    cycle = load(
        wf.doc(
            wf.start(initialInput="x"),
            wf.agent("a"),
            wf.agent("b"),
            wf.link("start", "a"),
            wf.link("a", "b"),
            wf.link("b", "a"),
        )
    )
    await cycle.run(sink=sink, settings=RunSettings(max_steps=3))
    entries = logs(sink.events)
    assert {e["type"] for e in entries} == set(LOG_TYPES)
    assert all(set(e) == {"timestamp", "nodeId", "type", "content"} for e in entries)


async def test_each_entry_says_what_the_original_said(wf, load, mock_llm):
    mock_llm.script(SCRIPT)
    flow = load(everything(wf))
    sink = nodeloom.ListSink()
    paused = await flow.run(sink=sink)
    await flow.resume(paused.run_id, "ok", {"decision": "reject", "note": " not now "})
    entries = [(e["nodeId"], e["type"], e["content"]) for e in logs(sink.events)]
    assert entries[:3] == [
        ("start", "step_start", "start node"),
        ("lead", "step_start", "lead agent node"),
        ("lead", "start_prompt", "start here"),
    ]
    assert ("lead", "llm_response", "all done") in entries
    assert ("check", "step_start", "condition node") in entries
    assert ("check", "logic_check", 'Condition 1 (contains "done") evaluated as true') in entries
    approval = [e[1:] for e in entries if e[0] == "ok"]
    assert approval == [
        ("step_start", "approval node"),
        ("wait_input", "Waiting for user approval"),
        ("input_received", "User rejected this step. Feedback: not now"),
    ]
    assert entries[-1] == ("failing", "llm_error", "no model today"), "no duplicate error entry"
    calls = [json.loads(c) for n, kind, c in entries if kind.startswith("subagent_call")]
    assert {(c["type"], c["subagentName"]) for c in calls} == {
        ("subagent_call_start", "Helper"),
        ("subagent_call_end", "Helper"),
        ("subagent_call_start", "Broken"),
        ("subagent_call_error", "Broken"),
    }
    assert all(c["parentNodeId"] == "lead" and c["depth"] == 1 for c in calls)


async def test_an_approval_answered_yes_logs_an_approval(wf, load, mock_llm):
    flow = load(wf.doc(wf.start(initialInput="x"), wf.approval("ok"), wf.link("start", "ok")))
    sink = nodeloom.ListSink()
    await flow.run(sink=sink, answers={"ok": "yes"})
    [received] = [e for e in logs(sink.events) if e["type"] == "input_received"]
    assert received["content"] == "User approved this step."


async def test_a_failure_before_the_flow_is_an_error_entry(wf, load, mock_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    flow = load(wf.doc(wf.start(initialInput="x"), wf.agent("a"), wf.link("start", "a")))
    sink = nodeloom.ListSink()
    await flow.run(sink=sink)
    [entry] = logs(sink.events)
    assert (entry["nodeId"], entry["type"]) == ("a", "error")
    assert "OPENAI_API_KEY" in entry["content"]


async def test_logs_read_the_json_events_of_the_command_line_too(wf, load, mock_llm):
    flow = load(wf.doc(wf.start(initialInput="x"), wf.agent("a"), wf.link("start", "a")))
    sink = nodeloom.ListSink()
    await flow.run(sink=sink)
    as_json = [json.loads(json.dumps(e.to_json())) for e in sink.events]
    assert logs(as_json) == logs(sink.events)
