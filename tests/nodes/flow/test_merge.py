from nodeloom.nodes.flow.merge.executor import executor
from nodeloom.testing.context import ExecutorContext, call_executor


async def test_list_mode_outputs_the_values_in_the_order_given_by_the_engine():
    context = ExecutorContext(port_sources={"input": [("A", 1), ("B", {"x": 2})]})
    result, _ = await call_executor(executor, {"mode": "list"}, {"input": [1, {"x": 2}]}, context)
    assert result.outputs == {"output": [1, {"x": 2}]}


async def test_object_mode_keys_values_by_source_node_name():
    context = ExecutorContext(port_sources={"input": [("A", 1), ("B", 2)]})
    result, _ = await call_executor(executor, {"mode": "object"}, {}, context)
    assert result.outputs == {"output": {"A": 1, "B": 2}}


async def test_object_mode_keeps_both_values_of_a_source_wired_twice():
    context = ExecutorContext(port_sources={"input": [("Filter", [1]), ("Filter", [2])]})
    result, _ = await call_executor(executor, {"mode": "object"}, {}, context)
    assert result.outputs == {"output": {"Filter": [1], "Filter (2)": [2]}}
