"""`nodeloom run` with the standard OTEL_* variables exports its trace over OTLP/HTTP to a
real receiver on loopback: the span tree arrives whole, and no credential travels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nodeloom.testing.builders import chain, node

from .otlp_receiver import OtlpReceiver

NODE_KEY = "sk-node-key-6f1d2c9a77"
ENV_KEY = "sk-env-key-0b3e8c1f42"


@pytest.mark.slow
def test_a_cli_run_exports_its_span_tree_and_no_credential(tmp_path, mock_llm):
    mock_llm.script([{"match": {"system": "French"}, "reply": "Bonjour"}, {"reply": "Hello"}])
    flow = chain(
        node("start", "chat-start", name="Chat Start"),
        node(
            "french",
            "llm-completion",
            name="French",
            model="openai:gpt-4o-mini",
            system="Answer in French.",
            prompt="{{ $json.message }}",
            api_key=NODE_KEY,
            base_url=mock_llm.base_url,
        ),
        node(
            "english",
            "llm-completion",
            name="English",
            model="openai:gpt-4o-mini",
            prompt="{{ $json.text }}",
        ),
    )
    path = tmp_path / "flow.json"
    path.write_text(json.dumps({**flow, "name": "Translator"}), encoding="utf-8")
    with OtlpReceiver() as receiver:
        environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        environment.update(
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
            OTEL_BSP_SCHEDULE_DELAY="50",
            OPENAI_API_KEY=ENV_KEY,
        )
        done = subprocess.run(
            [
                str(Path(sys.executable).parent / "nodeloom"),
                "run",
                str(path),
                "--input",
                "hi",
                "--json",
            ],
            capture_output=True,
            text=True,
            env=environment,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run_id = json.loads(done.stdout.splitlines()[-1])["run_id"]

    spans = {span.name: span for span in receiver.spans}
    assert sorted(span.name for span in receiver.spans) == [
        "chat gpt-4o-mini",
        "chat gpt-4o-mini",
        "node Chat Start",
        "node English",
        "node French",
        "run Translator",
    ]
    run = spans["run Translator"]
    assert run.parent_span_id == b""
    assert run.attributes["nodeloom.run.id"] == run_id
    assert run.resource["service.name"] == "nodeloom"
    nodes = [s for s in receiver.spans if s.name.startswith("node ")]
    assert {s.parent_span_id for s in nodes} == {run.span_id}
    chats = [s for s in receiver.spans if s.name == "chat gpt-4o-mini"]
    assert len(chats) == 2
    parents = {s.span_id: s.name for s in nodes}
    assert sorted(parents[c.parent_span_id] for c in chats) == ["node English", "node French"]
    assert all(c.attributes["gen_ai.usage.output_tokens"] == 1 for c in chats)
    assert {s.trace_id for s in receiver.spans} == {run.trace_id}

    sent = b"".join(receiver.bodies)
    assert NODE_KEY.encode() not in sent and ENV_KEY.encode() not in sent
    for span in receiver.spans:
        values = [*span.attributes.values(), *span.resource.values()]
        assert not any(NODE_KEY in str(v) or ENV_KEY in str(v) for v in values), span.name
