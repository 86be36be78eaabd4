"""Workflow Start: the run's message, else the initial input, as text."""

import pytest

from nodeloom.formats.workflow.nodes.start.executor import executor, start_text
from nodeloom.testing.context import ExecutorContext, call_executor


@pytest.mark.parametrize(
    "trigger, initial, text",
    [
        ({"message": "from the run"}, "from the file", "from the run"),
        ({"message": ""}, "from the file", "from the file"),
        (None, "from the file", "from the file"),
        ({"message": ""}, None, ""),
        ({"message": {"a": [1, "é"]}}, "x", '{"a":[1,"é"]}'),
        ({"message": 3}, "x", "3"),
    ],
)
def test_the_output_is_the_message_else_the_initial_input(trigger, initial, text):
    assert start_text(trigger, initial) == text


async def test_it_logs_its_step_and_outputs_text():
    context = ExecutorContext(trigger={"message": "hi"})
    result, events = await call_executor(executor, {"initial_input": "x"}, context=context)
    assert result.outputs == {"output": "hi"}
    assert [e.data for e in events] == [{"log": "step_start", "content": "start node"}]
