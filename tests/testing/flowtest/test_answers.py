"""A flow test answers a waiting node ahead of time, or expects the run to pause."""

from __future__ import annotations

import json

from nodeloom.testing.builders import chain, node
from nodeloom.testing.flowtest import load_flowtest, run_file

FLOW = chain(
    node("start", "chat-start"),
    node("ok", "approval", name="Approve", prompt="Send it?"),
)

TESTS = """
flow: approve.json
tests:
  - name: an approval answered yes fires approve
    input: hi
    answers: {Approve: {decision: approve}}
    expect:
      fired: {Approve: [approve, decision]}
      outputs: {Approve: {decision: {decision: approve}}}
  - name: without an answer the run pauses
    input: hi
    expect:
      status: paused
      events: [{type: waiting, node: Approve}, run_paused]
"""


async def test_answers_resume_waiting_nodes_and_an_unanswered_run_pauses(tmp_path):
    (tmp_path / "approve.json").write_text(json.dumps(FLOW))
    (tmp_path / "approve.flowtest.yaml").write_text(TESTS)
    results = await run_file(load_flowtest(tmp_path / "approve.flowtest.yaml"))
    assert [(r.name, r.report()) for r in results if not r.passed] == []
