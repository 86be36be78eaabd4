"""The Code node runs the user's `main(input, nodes)` in a real child process.

No mocks: every test starts the runner the way the engine does.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from nodeloom.errors import CodeError, NodeError, NodeTimeout
from nodeloom.nodes.flow.code.definition import DEFAULT_CODE, definition
from nodeloom.nodes.flow.code.executor import executor
from nodeloom.plugins.contract import Event, ExecutionResult
from nodeloom.testing.builders import graph, node
from nodeloom.testing.context import ExecutorContext, call_executor


async def run(
    code: str,
    input: Any = None,
    *,
    upstream: dict[str, Any] | None = None,
    **parameters: Any,
) -> tuple[Any, list[Event]]:
    """Run the Code node once; returns its output value and the events of its result."""
    inputs = {} if input is None else {"input": input}
    context = ExecutorContext(node_type="code", upstream_outputs=upstream or {})
    result, _ = await call_executor(executor, {"code": code, **parameters}, inputs, context)
    assert isinstance(result, ExecutionResult)
    assert list(result.outputs) == ["output"]
    return result.outputs["output"], result.events


def is_running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie waiting for its parent (init)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# --- the contract -----------------------------------------------------------------------


def test_definition_keeps_the_public_contract() -> None:
    assert (definition.id, definition.name, definition.category) == ("code", "Code", "flow")
    assert definition.execution_mode == "flow"
    assert definition.side_effects == "external"
    assert definition.icon == "Code"
    [port_in] = definition.inputs
    assert (port_in.id, port_in.socket, port_in.required) == ("input", "data", False)
    assert [port.id for port in definition.outputs] == ["output"]
    code = definition.parameter("code")
    timeout = definition.parameter("timeout")
    memory = definition.parameter("memory_limit_mb")
    assert code is not None and timeout is not None and memory is not None
    assert (code.type, code.language, code.required) == ("code", "python", True)
    assert code.default == DEFAULT_CODE
    assert (timeout.type, timeout.default, timeout.minimum, timeout.maximum) == (
        "number",
        30,
        0.1,
        3600,
    )
    assert (memory.type, memory.default, memory.minimum) == ("integer", 512, 32)
    json.dumps(definition.to_json())
    assert executor.node_type == definition.id


async def test_the_default_code_passes_the_input_on() -> None:
    value, events = await run(DEFAULT_CODE, {"a": [1, 2]})
    assert value == {"a": [1, 2]}
    assert events == []


async def test_returns_the_transformed_input() -> None:
    code = "def main(input, nodes):\n    return {'total': sum(input['prices']) * 2}\n"
    value, _ = await run(code, {"prices": [1, 2.5, 3]})
    assert value == {"total": 13.0}


async def test_input_is_none_when_nothing_is_wired() -> None:
    value, _ = await run("def main(input, nodes):\n    return input is None\n")
    assert value is True


async def test_nodes_maps_upstream_node_names_to_their_outputs() -> None:
    code = "def main(input, nodes):\n    return nodes['Fetch']['items'][0] + nodes['Count']\n"
    value, _ = await run(code, upstream={"Fetch": {"items": [40]}, "Count": 2})
    assert value == 42


async def test_text_survives_the_trip_in_utf8() -> None:
    code = "def main(input, nodes):\n    print('héllo ✓')\n    return input + ' ✓'\n"
    value, events = await run(code, "naïve")
    assert value == "naïve ✓"
    assert events[0].data == {"logs": "héllo ✓\n"}


# --- output: prints are logs, never the result ------------------------------------------


async def test_prints_become_a_progress_event_and_do_not_touch_the_result() -> None:
    code = (
        "import os, sys\n"
        "def main(input, nodes):\n"
        '    print(\'{"ok": false, "kind": "exception"}\')\n'
        "    print('to stderr', file=sys.stderr)\n"
        "    os.write(1, b'straight to fd 1\\n')\n"
        "    return 'result'\n"
    )
    value, events = await run(code)
    assert value == "result"
    [event] = events
    assert event.event_type == "progress"
    assert event.data == {
        "logs": '{"ok": false, "kind": "exception"}\nto stderr\nstraight to fd 1\n'
    }


async def test_very_long_output_is_cut() -> None:
    code = "def main(input, nodes):\n    print('x' * 1_000_000)\n    return 1\n"
    value, events = await run(code)
    assert value == 1
    logs = events[0].data["logs"]
    assert len(logs) < 300_000
    assert "more bytes of output not kept" in logs


async def test_logs_are_kept_on_the_error_too() -> None:
    code = "def main(input, nodes):\n    print('step 1 done')\n    raise ValueError('step 2')\n"
    with pytest.raises(CodeError) as caught:
        await run(code)
    assert caught.value.details["logs"] == "step 1 done\n"


# --- the user's errors ------------------------------------------------------------------


async def test_an_exception_shows_the_users_traceback_only() -> None:
    code = "def ratio(x):\n    return 10 / x\n\ndef main(input, nodes):\n    return ratio(input)\n"
    with pytest.raises(CodeError) as caught:
        await run(code, 0)
    error = caught.value
    assert str(error) == "ZeroDivisionError: division by zero"
    assert error.code == "code_error"
    assert error.retryable is False
    trace = error.traceback
    assert 'File "<code>", line 5, in main' in trace
    assert "return ratio(input)" in trace
    assert 'File "<code>", line 2, in ratio' in trace
    assert "return 10 / x" in trace
    assert "runner" not in trace
    assert "nodeloom" not in trace
    assert error.to_json()["traceback"] == trace


async def test_an_error_while_defining_main_is_the_users_too() -> None:
    code = "import no_such_module_here\n\ndef main(input, nodes):\n    return 1\n"
    with pytest.raises(CodeError) as caught:
        await run(code)
    assert str(caught.value).startswith("ModuleNotFoundError: No module named")
    assert 'File "<code>", line 1, in <module>' in caught.value.traceback
    assert "runner" not in caught.value.traceback


async def test_a_syntax_error_shows_the_line_and_a_caret() -> None:
    code = "def main(input, nodes):\n    return (input +\n"
    with pytest.raises(CodeError) as caught:
        await run(code)
    message = str(caught.value)
    assert message.startswith("SyntaxError: ")
    assert "(line 2)" in message
    assert "return (input +" in message
    assert "^" in message
    assert 'File "<code>", line 2' in caught.value.traceback


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("x = 1\n", "defines no `main` function"),
        ("main = 3\n", "`main` is a int, not a function"),
        ("def main(input):\n    return input\n", "yours is `def main(input)`"),
        ("def main(a, b, c):\n    return a\n", "yours is `def main(a, b, c)`"),
        ("async def main(input, nodes):\n    return 1\n", "`main` is `async def`"),
    ],
)
async def test_main_must_be_def_main_input_nodes(code: str, expected: str) -> None:
    with pytest.raises(CodeError) as caught:
        await run(code)
    assert expected in str(caught.value)
    assert "def main(input, nodes)" in str(caught.value)


async def test_main_may_take_optional_extra_arguments() -> None:
    value, _ = await run("def main(input, nodes, extra=1, *rest):\n    return extra\n")
    assert value == 1


async def test_a_value_that_is_not_json_names_its_type_and_where_it_is() -> None:
    code = (
        "import datetime\n"
        "def main(input, nodes):\n"
        "    return {'when': [datetime.date(2024, 1, 2)]}\n"
    )
    with pytest.raises(CodeError) as caught:
        await run(code)
    message = str(caught.value)
    assert "not JSON-serialisable" in message
    assert "datetime.date" in message
    assert "the result['when'][0]" in message
    assert "isoformat()" in message


# --- limits -----------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_timeout_kills_an_infinite_loop() -> None:
    started = time.monotonic()
    with pytest.raises(NodeTimeout) as caught:
        await run("def main(input, nodes):\n    while True:\n        pass\n", timeout=1)
    elapsed = time.monotonic() - started
    assert 0.9 < elapsed < 2.5
    assert str(caught.value) == "code ran longer than 1 s; raise `timeout` or make it faster"
    assert caught.value.retryable is False
    assert caught.value.code == "node_timeout"


@pytest.mark.slow
async def test_running_out_of_cpu_time_is_a_timeout() -> None:
    code = (
        "import resource\n"
        "def main(input, nodes):\n"
        "    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)\n"
        "    resource.setrlimit(resource.RLIMIT_CPU, (1, hard))\n"
        "    while True:\n"
        "        pass\n"
    )
    with pytest.raises(NodeTimeout) as caught:
        await run(code, timeout=10)
    assert "CPU time" in str(caught.value)
    assert caught.value.retryable is False


async def test_the_memory_limit_turns_a_big_allocation_into_a_code_error() -> None:
    code = "def main(input, nodes):\n    block = bytearray(2 * 1024 ** 3)\n    return 1\n"
    with pytest.raises(CodeError) as caught:
        await run(code, memory_limit_mb=128)
    message = str(caught.value)
    assert "memory" in message
    assert "`memory_limit_mb`" in message
    assert "128 MB" in message
    assert "bytearray(2 * 1024 ** 3)" in caught.value.traceback


async def test_the_smallest_memory_limit_still_runs_simple_code() -> None:
    value, _ = await run("def main(input, nodes):\n    return [input] * 3\n", 1, memory_limit_mb=32)
    assert value == [1, 1, 1]


async def test_a_killed_process_is_reported_as_a_memory_problem() -> None:
    code = "import os, signal\ndef main(input, nodes):\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    with pytest.raises(CodeError) as caught:
        await run(code)
    assert "SIGKILL" in str(caught.value)
    assert "`memory_limit_mb`" in str(caught.value)


async def test_a_process_that_dies_otherwise_reports_its_exit_code_and_last_output() -> None:
    code = (
        "import os, sys\n"
        "def main(input, nodes):\n"
        "    print('about to leave', file=sys.stderr)\n"
        "    os._exit(3)\n"
    )
    with pytest.raises(CodeError) as caught:
        await run(code)
    assert "exited with code 3" in str(caught.value)
    assert "about to leave" in str(caught.value)


@pytest.mark.parametrize(
    ("parameters", "field"),
    [
        ({"timeout": 0}, "timeout"),
        ({"timeout": 5000}, "timeout"),
        ({"memory_limit_mb": 8}, "memory_limit_mb"),
    ],
)
async def test_limits_out_of_range_are_refused(parameters: dict[str, Any], field: str) -> None:
    with pytest.raises(NodeError) as caught:
        await run(DEFAULT_CODE, **parameters)
    assert f"`{field}`" in str(caught.value)


# --- isolation --------------------------------------------------------------------------


async def test_the_engines_environment_is_not_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NODELOOM_TEST_SECRET", "s3cret")
    code = (
        "import os\n"
        "def main(input, nodes):\n"
        "    return {'secret': os.environ.get('NODELOOM_TEST_SECRET'), 'env': dict(os.environ)}\n"
    )
    value, _ = await run(code)
    assert value["secret"] is None
    assert "s3cret" not in json.dumps(value)
    allowed = {"PATH", "LANG", "HOME", "TMPDIR", "LD_LIBRARY_PATH", "TZ", "LC_CTYPE"}
    assert set(value["env"]) <= allowed


async def test_the_code_does_not_run_in_the_engines_process() -> None:
    value, _ = await run("import os\ndef main(input, nodes):\n    return os.getpid()\n")
    assert value != os.getpid()


async def test_processes_the_code_leaves_behind_are_killed() -> None:
    code = (
        "import subprocess\n"
        "def main(input, nodes):\n"
        "    return subprocess.Popen(['sleep', '30']).pid\n"
    )
    started = time.monotonic()
    pid, _ = await run(code)
    assert time.monotonic() - started < 2
    deadline = time.monotonic() + 1
    while is_running(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not is_running(pid)


async def test_cancelling_the_node_kills_its_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    code = (
        "import os, time\n"
        "def main(input, nodes):\n"
        "    with open(input + '.tmp', 'w') as f:\n"
        "        f.write(str(os.getpid()))\n"
        "    os.replace(input + '.tmp', input)\n"
        "    time.sleep(60)\n"
    )
    task = asyncio.create_task(run(code, str(pid_file), timeout=120))
    deadline = time.monotonic() + 10
    while not pid_file.exists():
        assert time.monotonic() < deadline, "the code never started"
        assert not task.done(), task
        await asyncio.sleep(0.01)
    pid = int(pid_file.read_text())
    assert is_running(pid)

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    deadline = time.monotonic() + 1
    while True:
        try:
            os.kill(pid, 0)  # a zombie would still answer: the child must be reaped too
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, f"process {pid} still exists after cancel"
        await asyncio.sleep(0.01)


@pytest.mark.slow
def test_the_codes_processes_die_when_the_nodeloom_process_is_killed(tmp_path: Path) -> None:
    """SIGKILL of `nodeloom run` mid-node: the child and what it started die at once, so
    the side effect they were about to have never happens (a resume would run the node
    again: it must not have happened twice)."""
    pids, side_effect, grandchild_effect = tmp_path / "pids", tmp_path / "side", tmp_path / "grand"
    code = (
        "import os, subprocess, time\n"
        "def main(input, nodes):\n"
        f"    later = subprocess.Popen(['sh', '-c', 'sleep 1.5; touch {grandchild_effect}'])\n"
        f"    with open({str(pids) + '.tmp'!r}, 'w') as f:\n"
        "        f.write(f'{os.getpid()} {later.pid}')\n"
        f"    os.replace({str(pids) + '.tmp'!r}, {str(pids)!r})\n"
        "    time.sleep(1.5)\n"
        f"    open({str(side_effect)!r}, 'w').write('done')\n"
    )
    flow = tmp_path / "flow.json"
    flow.write_text(json.dumps(graph(node("slow", "code", code=code))))
    process = subprocess.Popen(
        [sys.executable, "-m", "nodeloom", "run", str(flow), "--json", "--ephemeral"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not pids.exists():
            assert time.monotonic() < deadline and process.poll() is None, "never started"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    children = [int(pid) for pid in pids.read_text().split()]
    deadline = time.monotonic() + 1
    while any(is_running(pid) for pid in children):
        assert time.monotonic() < deadline, f"still running after the kill: {children}"
        time.sleep(0.01)
    time.sleep(2)  # past the moment both would have acted
    assert not side_effect.exists() and not grandchild_effect.exists()
