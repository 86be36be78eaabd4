"""The public API is `nodeloom.__all__`, frozen here: changing it is a deliberate act that
updates this test and docs/api.md together."""

from __future__ import annotations

import json
import types
from collections.abc import AsyncIterator

import nodeloom
from nodeloom.testing.builders import chain, node

PUBLIC = [
    "BinaryRef",
    "DataValue",
    "Event",
    "EventSink",
    "ExecutionResult",
    "Flow",
    "FlowContext",
    "GraphError",
    "Issue",
    "ListSink",
    "NodeDefinition",
    "NodeError",
    "NodeEvent",
    "NodeloomError",
    "NullSink",
    "Parameter",
    "Port",
    "QueueSink",
    "Registry",
    "RunResult",
    "RunSettings",
    "RunStatus",
    "__version__",
    "default_registry",
    "load",
]


def greeting():
    return chain(
        node("start", "chat-start"),
        node("greet", "prompt-template", name="Greeting", template="Hi {{ $json.message }}"),
    )


def test_all_is_exactly_the_documented_public_api():
    assert sorted(nodeloom.__all__) == sorted(PUBLIC)
    assert len(nodeloom.__all__) == len(set(nodeloom.__all__)), "a name is listed twice"


def test_every_public_name_resolves():
    missing = [name for name in nodeloom.__all__ if not hasattr(nodeloom, name)]
    assert not missing, f"nodeloom.__all__ names missing attributes: {missing}"


def test_nothing_public_is_exported_outside_all():
    extra = [
        name
        for name, value in vars(nodeloom).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name not in nodeloom.__all__
    ]
    assert not extra, f"public names not in nodeloom.__all__: {extra}"


def test_load_accepts_a_graph_dict_and_returns_a_flow():
    assert isinstance(nodeloom.load(greeting()), nodeloom.Flow)


def test_load_accepts_a_path_to_a_graph_file(tmp_path):
    path = tmp_path / "greeting.json"
    path.write_text(json.dumps(greeting()), encoding="utf-8")
    assert isinstance(nodeloom.load(path), nodeloom.Flow)
    assert isinstance(nodeloom.load(str(path)), nodeloom.Flow)


async def test_run_returns_a_run_result_with_outputs_by_node_name():
    result = await nodeloom.load(greeting()).run("there")
    assert isinstance(result, nodeloom.RunResult)
    assert result.status is nodeloom.RunStatus.COMPLETED
    assert result.outputs["Greeting"] == {"output": {"text": "Hi there"}}


async def test_stream_is_an_async_iterator_of_events_ending_with_the_run_event():
    stream = nodeloom.load(greeting()).stream("there")
    assert isinstance(stream, AsyncIterator)
    events = [event async for event in stream]
    assert all(isinstance(event, nodeloom.Event) for event in events)
    assert events[0].event_type == "run_started"
    assert events[-1].event_type == "run_completed"
