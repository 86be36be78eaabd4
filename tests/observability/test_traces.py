"""Runs traced into the OpenTelemetry SDK's in-memory exporter: the span tree, the node and
model-call attributes, retries and failures."""

from __future__ import annotations

import os
import subprocess
import sys

import nodeloom
from nodeloom.testing.builders import chain, node

from .conftest import tree

RETRY = {"max_attempts": 3, "initial_interval": 0.01, "retry_on": ["code_error"]}


async def test_a_run_is_a_span_with_a_child_per_node_and_a_grandchild_per_model_call(
    spans, mock_llm
):
    mock_llm.script([{"reply": "Bonjour !"}])
    document = chain(
        node("start", "chat-start", name="Chat Start"),
        node(
            "ask",
            "llm-completion",
            name="Ask",
            model="openai:gpt-4o-mini",
            prompt="{{ $json.message }}",
        ),
    )
    flow = nodeloom.load({**document, "name": "Greeter"})
    result = await flow.run("Say hello in French")

    finished = spans.get_finished_spans()
    assert tree(finished) == [
        "run Greeter",
        "  node Chat Start",
        "  node Ask",
        "    chat gpt-4o-mini",
    ]
    by_name = {span.name: span for span in finished}
    run, ask, chat = by_name["run Greeter"], by_name["node Ask"], by_name["chat gpt-4o-mini"]
    assert run.attributes["nodeloom.run.id"] == result.run_id
    assert run.attributes["nodeloom.run.status"] == "completed"
    assert run.parent is None
    assert dict(ask.attributes) | {"nodeloom.node.duration_ms": 0} == {
        "nodeloom.run.id": result.run_id,
        "nodeloom.node.id": "ask",
        "nodeloom.node.name": "Ask",
        "nodeloom.node.type": "llm-completion",
        "nodeloom.node.status": "completed",
        "nodeloom.node.attempts": 1,
        "nodeloom.node.duration_ms": 0,
        "nodeloom.usage.prompt_tokens": 4,
        "nodeloom.usage.completion_tokens": 2,
        "nodeloom.usage.total_tokens": 6,
    }
    assert dict(chat.attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.usage.input_tokens": 4,
        "gen_ai.usage.output_tokens": 2,
        "nodeloom.run.id": result.run_id,
    }
    assert run.start_time <= ask.start_time <= chat.start_time <= chat.end_time <= ask.end_time


async def test_a_node_retried_then_failed_says_its_attempts_and_fails_the_run_span(spans):
    flow = nodeloom.load(
        chain(
            node("start", "chat-start"),
            node(
                "boom",
                "code",
                name="Boom",
                code="def main(input, nodes):\n    raise ValueError('no')\n",
                retry=RETRY,
            ),
        )
    )
    result = await flow.run("x")
    assert result.status.value == "failed"
    by_name = {span.name: span for span in spans.get_finished_spans()}
    boom, run = by_name["node Boom"], by_name["run flow"]
    assert boom.attributes["nodeloom.node.status"] == "error"
    assert boom.attributes["nodeloom.node.attempts"] == 3
    assert boom.attributes["error.type"] == "code_error"
    assert boom.status.status_code.name == "ERROR"
    assert run.status.status_code.name == "ERROR"
    assert run.attributes["error.type"] == "code_error"


async def test_a_skipped_node_is_an_event_on_the_run_span_not_a_span(spans):
    flow = nodeloom.load("examples/triage.json")
    await flow.run("I want a refund")
    finished = spans.get_finished_spans()
    assert "node Support" not in {span.name for span in finished}
    (run,) = [span for span in finished if span.name.startswith("run ")]
    skipped = {e.attributes["nodeloom.node.name"] for e in run.events if e.name == "node skipped"}
    assert skipped == {"Support", "General"}


def test_without_otel_variables_a_run_does_not_even_import_opentelemetry(tmp_path):
    code = (
        "import asyncio, sys, nodeloom\n"
        "flow = nodeloom.load('examples/hello.json')\n"
        "assert asyncio.run(flow.run('hi')).ok\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    environment["NODELOOM_DATA_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
