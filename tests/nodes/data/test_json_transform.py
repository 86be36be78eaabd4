"""JSON Transform: a JSONata expression evaluated against the input."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import nodeloom
from nodeloom.errors import NodeError
from nodeloom.nodes.data.json_transform import executor as module
from nodeloom.nodes.data.json_transform.bounds import Guard
from nodeloom.nodes.data.json_transform.definition import definition
from nodeloom.nodes.data.json_transform.executor import executor
from nodeloom.testing.context import call_executor

ORDER = {
    "customer": {"first": "Ada", "last": "Lovelace"},
    "items": [{"sku": "pen", "price": 2, "qty": 3}, {"sku": "ink", "price": 5, "qty": 1}],
}


async def transform(expression: str, value: object) -> object:
    result, events = await call_executor(executor, {"expression": expression}, {"input": value})
    assert list(result.outputs) == ["output"]
    assert events == []
    return result.outputs["output"]


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "json-transform"
    assert (definition.name, definition.category, definition.icon) == (
        "JSON Transform",
        "data",
        "Braces",
    )
    expression = definition.parameter("expression")
    assert expression is not None
    assert (expression.type, expression.language, expression.required) == (
        "code",
        "jsonata",
        True,
    )
    assert [port.id for port in definition.outputs] == ["output"]


def test_importing_the_definition_does_not_import_jsonata() -> None:
    src = Path(nodeloom.__file__).resolve().parent.parent
    probe = (
        "import sys, nodeloom.nodes.data.json_transform.definition; print('jsonata' in sys.modules)"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() == "False"


async def test_an_expression_reshapes_the_input() -> None:
    expression = (
        '{"name": customer.first & " " & customer.last, '
        '"total": $sum(items.(price * qty)), "skus": items.sku}'
    )
    assert await transform(expression, ORDER) == {
        "name": "Ada Lovelace",
        "total": 11,
        "skus": ["pen", "ink"],
    }


async def test_dollar_passes_the_input_through() -> None:
    assert await transform("$", ORDER) == ORDER


async def test_a_list_input_is_read_as_a_whole() -> None:
    assert await transform("$count($)", [1, 2, 3]) == 3


async def test_results_are_plain_json_lists() -> None:
    output = await transform("[1..3]", None)
    assert output == [1, 2, 3]
    assert type(output) is list


async def test_an_expression_that_matches_nothing_outputs_null() -> None:
    assert await transform("customer.middle", ORDER) is None


async def test_a_syntax_error_fails_the_node_with_the_expression_and_jsonata_message() -> None:
    with pytest.raises(NodeError) as caught:
        await transform("items[price >", ORDER)
    error = caught.value
    assert error.code == "jsonata_error"
    assert error.retryable is False
    assert str(error).startswith("JSONata expression failed: ")
    assert str(error).endswith('. Expression: "items[price >"')
    assert error.details["expression"] == "items[price >"
    assert error.details["jsonata_code"].startswith("S0")


async def test_an_evaluation_error_fails_the_node_with_jsonata_message() -> None:
    with pytest.raises(NodeError) as caught:
        await transform("customer.first + 1", ORDER)
    assert str(caught.value) == (
        "JSONata expression failed: The left side of the + operator must evaluate to a "
        'number (T2001). Expression: "customer.first + 1"'
    )


async def test_a_function_result_is_not_json() -> None:
    with pytest.raises(NodeError, match="produced a Symbol, not JSON"):
        await transform("function($x) { $x }", ORDER)


async def test_an_empty_expression_fails_the_node() -> None:
    with pytest.raises(NodeError) as caught:
        await call_executor(executor, {"expression": "  "}, {"input": ORDER})
    assert caught.value.code == "invalid_parameter"
    assert "JSON Transform needs a JSONata `expression`" in str(caught.value)


async def test_each_distinct_expression_is_compiled_once() -> None:
    module._compile.cache_clear()
    for _ in range(3):
        await transform("customer.first", ORDER)
    await transform("customer.last", ORDER)
    info = module._compile.cache_info()
    assert (info.misses, info.hits, info.maxsize) == (2, 2, 256)


async def test_a_cached_expression_reads_the_time_of_its_own_evaluation() -> None:
    await transform("$millis()", None)
    await transform("$string(1)", None)  # compiling another expression must not matter
    time.sleep(0.05)
    before = int(time.time() * 1000)
    assert await transform("$millis()", None) >= before


async def test_a_cached_expression_still_calls_functions_correctly() -> None:
    await transform("$map(items, function($i) { $i.qty })", ORDER)
    await transform("customer", ORDER)
    assert await transform("$map(items, function($i) { $i.qty })", ORDER) == [3, 1]


LOOP = "($f := function($x) { $f($x + 1) }; $f(1))"


async def test_a_cancelled_evaluation_stops_its_worker_thread() -> None:
    guard = Guard()
    task = asyncio.create_task(module.transform(LOOP, None, guard))
    await asyncio.sleep(0.3)
    assert not guard.finished.is_set()  # still looping, off the event loop
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(guard.finished.wait, 2)


async def test_an_expression_without_a_node_timeout_stops_at_the_time_limit() -> None:
    with pytest.raises(NodeError, match="D1012"):
        await module.transform(LOOP, None, Guard(time_limit=0.3))


async def test_runaway_recursion_stops_at_the_depth_limit() -> None:
    with pytest.raises(NodeError, match="D1011"):
        await transform("($f := function($x) { 1 + $f($x + 1) }; $f(1))", None)


async def test_jsonata_regexes_run_on_re2() -> None:
    started = time.perf_counter()
    assert await transform("$contains(s, /(a+)+$/)", {"s": "a" * 40 + "!"}) is False
    assert time.perf_counter() - started < 0.5
    assert await transform('$replace(s, /A/i, "b")', {"s": "xaXa"}) == "xbXb"
    with pytest.raises(NodeError, match="backreferences"):
        await transform("$match(s, /(a)\\1/)", {"s": "aa"})
