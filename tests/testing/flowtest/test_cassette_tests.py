"""A flow test that replays a cassette instead of asking the mock LLM."""

from __future__ import annotations

import json

import nodeloom
from nodeloom.cassettes import recording
from nodeloom.testing.builders import chain, node
from nodeloom.testing.flowtest import load_flowtest, run_file

FLOW = chain(
    node("start", "chat-start"),
    node(
        "reply",
        "llm-completion",
        name="Reply",
        model="openai:gpt-4o-mini",
        prompt="{{ $json.message }}",
    ),
)

TESTS = """
flow: reply.json
cassette: reply.cassette.json
tests:
  - name: the recorded answer comes back
    input: ping
    expect:
      outputs: {Reply: {output: {text: pong}}}
  - name: another question was never recorded
    input: pang
    expect:
      outputs: {Reply: {output: {text: pong}}}
"""


async def test_a_cassette_answers_the_recorded_request_and_names_an_unrecorded_one(
    tmp_path, mock_llm
):
    mock_llm.script([{"reply": "pong"}])
    (tmp_path / "reply.json").write_text(json.dumps(FLOW))
    with recording(tmp_path / "reply.cassette.json"):
        assert (await nodeloom.load(FLOW).run("ping")).ok
    asked = len(mock_llm.requests)
    (tmp_path / "reply.flowtest.yaml").write_text(TESTS)

    passed, failed = await run_file(load_flowtest(tmp_path / "reply.flowtest.yaml"))

    assert passed.passed, passed.report()
    assert failed.problems[0] == (
        f"cassette: 1 request(s) not recorded: POST {mock_llm.base_url}/chat/completions"
    )
    assert len(mock_llm.requests) == asked  # the replays never reached the mock
