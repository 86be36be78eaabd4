"""The MCP Server node against a real MCP server (mcp_servers/arith_server.py, written
with mcp 2.3.0's MCPServer), started as a subprocess by the node (stdio) or served over
streamable HTTP on 127.0.0.1. Tools are called through the session the node opened."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from agno.tools.mcp import MCPTools

from nodeloom.errors import NodeError
from nodeloom.net import ENV_ALLOW_PRIVATE
from nodeloom.nodes.tools.mcp_server.definition import check_mcp_server, definition
from nodeloom.nodes.tools.mcp_server.executor import executor
from nodeloom.nodes.tools.toolset.executor import executor as toolset
from nodeloom.paths import default_services
from nodeloom.plugins.contract import BuildContext, ToolsResult
from nodeloom.testing.builders import edge, graph, node

SERVER = Path(__file__).parent / "mcp_servers" / "arith_server.py"
COMMAND = shlex.join([sys.executable, str(SERVER)])


def context() -> BuildContext:
    return BuildContext(
        node_id="t",
        node_name="T",
        node_type="mcp-server",
        chat_id=None,
        services=default_services(),
    )


async def close(built: BuildContext) -> None:
    for cleanup in reversed(built.cleanups):
        await cleanup()


async def build(data: dict[str, Any]) -> tuple[ToolsResult, BuildContext]:
    built = context()
    result = await executor.build(data, built)
    return result, built


async def build_error(data: dict[str, Any]) -> NodeError:
    built = context()
    with pytest.raises(NodeError) as caught:
        await executor.build(data, built)
    assert built.cleanups == []  # nothing is left open to close
    assert caught.value.retryable is False
    return caught.value


async def call(result: ToolsResult, tool: str, **arguments: Any) -> str:
    """Call a tool the way an agent does: through the Agno Function's entrypoint."""
    [toolkit] = result.tools
    function = toolkit.functions[tool]
    answer = await function.entrypoint(**arguments)
    return answer.content


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "State:\tZ" in status.read_text()  # exited, not yet reaped


@pytest.fixture
def no_env_allowance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_ALLOW_PRIVATE, raising=False)


# -- the definition ------------------------------------------------------------------------


def test_the_mcp_server_is_a_structural_node_with_one_tools_output():
    assert definition.id == "mcp-server"
    assert definition.category == "tools"
    assert definition.execution_mode == "structural"
    assert definition.inputs == ()
    assert [(port.id, port.socket) for port in definition.outputs] == [("tools", "tools")]
    ids = [parameter.id for parameter in definition.parameters]
    assert ids == [
        "command",
        "url",
        "env",
        "allow",
        "connect_timeout",
        "call_timeout",
        "allow_private_network",
    ]
    assert "timeout" not in ids  # the engine's per-node setting keeps its meaning


def test_the_check_wants_exactly_one_of_command_and_url():
    assert [f for f, _ in check_mcp_server({})] == ["command"]
    assert [f for f, _ in check_mcp_server({"command": "  "})] == ["command"]
    both = check_mcp_server({"command": "python s.py", "url": "https://x.example/mcp"})
    assert [f for f, _ in both] == ["url"]
    assert "not both" in both[0][1]
    assert check_mcp_server({"command": "python s.py"}) == []
    assert check_mcp_server({"url": "https://mcp.example.com/mcp"}) == []


def test_the_check_finds_a_bad_url_env_or_allow_list():
    assert check_mcp_server({"url": "ftp://x.example"})[0][0] == "url"
    assert check_mcp_server({"command": "python s.py", "env": ["A=1"]})[0][0] == "env"
    assert check_mcp_server({"command": "python s.py", "env": {"A": {"b": 1}}})[0][0] == "env"
    assert check_mcp_server({"url": "https://x.example/mcp", "env": {"A": "1"}})[0][0] == "env"
    assert check_mcp_server({"command": "python s.py", "allow": "add"})[0][0] == "allow"
    assert check_mcp_server({"command": "python s.py", "allow": ["add", ""]})[0][0] == "allow"
    assert check_mcp_server({"command": "python s.py", "env": {"A": 1}, "allow": ["add"]}) == []


# -- stdio ---------------------------------------------------------------------------------


async def test_a_command_server_offers_its_tools_and_they_really_run():
    result, built = await build({"command": COMMAND})
    try:
        assert result.names == ["add", "shout"]
        assert result.source == f"mcp: {COMMAND}"
        [toolkit] = result.tools
        assert isinstance(toolkit, MCPTools)
        assert toolkit.initialized
        assert await call(result, "add", a=2, b=40) == "42"
        assert await call(result, "shout", text="hello") == "HELLO!"
        direct = await toolkit.session.call_tool("add", {"a": 1, "b": 2})
        assert direct.structured_content == {"result": 3}
    finally:
        await close(built)


async def test_the_allow_list_restricts_the_tools():
    result, built = await build({"command": COMMAND, "allow": ["shout"]})
    try:
        assert result.names == ["shout"]
        assert list(result.tools[0].functions) == ["shout"]
        assert await call(result, "shout", text="hi") == "HI!"
    finally:
        await close(built)


async def test_an_allow_listed_tool_the_server_does_not_offer_is_an_error():
    error = await build_error({"command": COMMAND, "allow": ["shout", "divide"]})
    assert error.code == "tool_not_found"
    assert f"MCP server `{COMMAND}`" in str(error)
    assert "`allow` names 'divide', which the server does not offer; it offers: add, shout" in (
        str(error)
    )


async def test_a_server_with_no_tools_is_an_error():
    error = await build_error({"command": f"{COMMAND} --no-tools"})
    assert error.code == "no_tools"
    assert "the server offers no tools" in str(error)


async def test_a_command_that_does_not_exist_is_an_error():
    error = await build_error({"command": "no-such-mcp-server-program --stdio"})
    assert error.code == "mcp_failed"
    assert "MCP server `no-such-mcp-server-program --stdio`" in str(error)
    assert "the program 'no-such-mcp-server-program' is not on the PATH" in str(error)
    missing = await build_error({"command": "./no/such/server"})
    assert "there is no file" in str(missing)


async def test_a_server_that_exits_at_once_is_an_error_showing_its_stderr(tmp_path):
    script = tmp_path / "crash.py"
    script.write_text(
        "import sys\nprint('starting', file=sys.stderr)\n"
        "print('ConfigError: API_KEY is not set', file=sys.stderr)\nsys.exit(3)\n"
    )
    started = time.monotonic()
    error = await build_error({"command": f"{sys.executable} {script}", "connect_timeout": 30})
    assert time.monotonic() - started < 10  # reported when it exits, not at the timeout
    assert error.code == "mcp_failed"
    message = str(error)
    assert f"MCP server `{sys.executable} {script}`: could not connect" in message
    assert "The server's stderr ended with:\n  starting\n  ConfigError: API_KEY is not set" in (
        message
    )


@pytest.mark.slow
async def test_a_server_that_never_answers_fails_after_connect_timeout(tmp_path):
    script = tmp_path / "silent.py"
    script.write_text("import time\ntime.sleep(60)\n")
    started = time.monotonic()
    error = await build_error({"command": f"{sys.executable} {script}", "connect_timeout": 1})
    assert time.monotonic() - started < 8  # 1 s, and the SDK's grace period to stop it
    assert error.code == "mcp_failed"
    assert "no answer within connect_timeout (1 s)" in str(error)
    assert "The server wrote nothing to stderr." in str(error)


async def test_env_reaches_the_server_and_closing_stops_its_process(tmp_path):
    pid_file = tmp_path / "server.pid"
    result, built = await build({"command": COMMAND, "env": {"ARITH_PID_FILE": str(pid_file)}})
    assert len(built.cleanups) == 1
    pid = int(pid_file.read_text())
    assert not process_gone(pid)
    assert await call(result, "add", a=1, b=1) == "2"
    await close(built)
    deadline = time.monotonic() + 5
    while not process_gone(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert process_gone(pid)
    assert not result.tools[0].initialized


async def test_parameters_of_the_wrong_shape_are_errors():
    neither = await build_error({})
    assert neither.code == "invalid_parameter"
    assert "set `command`" in str(neither)
    both = await build_error({"command": COMMAND, "url": "http://127.0.0.1:1/mcp"})
    assert "not both" in str(both)
    assert (await build_error({"command": "python 'unclosed"})).code == "invalid_parameter"
    assert (await build_error({"command": COMMAND, "env": ["A"]})).code == "invalid_parameter"
    assert (await build_error({"command": COMMAND, "allow": "add"})).code == "invalid_parameter"
    bad_timeout = await build_error({"command": COMMAND, "connect_timeout": 0})
    assert "`connect_timeout` must be more than 0 seconds" in str(bad_timeout)


async def test_a_parameter_known_only_in_the_flow_is_an_error():
    built = context()
    built.deferred = frozenset({"command"})
    with pytest.raises(NodeError, match="tools are built before the flow runs"):
        await executor.build({"command": None}, built)


# -- streamable HTTP -----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    """The arith server over streamable HTTP on 127.0.0.1, in a subprocess of its own."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the MCP test server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.slow
async def test_a_url_server_offers_its_tools_over_streamable_http(http_server, no_env_allowance):
    result, built = await build({"url": http_server, "allow_private_network": True})
    try:
        assert result.names == ["add", "shout"]
        assert result.source == f"mcp: {http_server}"
        assert await call(result, "add", a=20, b=22) == "42"
        assert len(built.cleanups) == 1
    finally:
        await close(built)
    assert not result.tools[0].initialized


@pytest.mark.slow
async def test_the_allow_list_applies_to_a_url_server(http_server, no_env_allowance):
    result, built = await build(
        {"url": http_server, "allow_private_network": True, "allow": ["add"]}
    )
    try:
        assert result.names == ["add"]
    finally:
        await close(built)
    error = await build_error(
        {"url": http_server, "allow_private_network": True, "allow": ["multiply"]}
    )
    assert error.code == "tool_not_found"
    assert "it offers: add, shout" in str(error)


async def test_a_loopback_url_is_refused_unless_allowed(no_env_allowance):
    error = await build_error({"url": "http://127.0.0.1:9/mcp"})
    assert error.code == "ssrf_blocked"
    assert "refused to connect to 127.0.0.1 (loopback address)" in str(error)
    assert "allow_private_network: true on the MCP Server node" in str(error)
    private = await build_error({"url": "http://10.1.2.3/mcp"})
    assert private.code == "ssrf_blocked"


@pytest.mark.slow
async def test_the_environment_switch_allows_a_loopback_url(http_server, monkeypatch):
    monkeypatch.setenv(ENV_ALLOW_PRIVATE, "1")
    result, built = await build({"url": http_server})
    try:
        assert result.names == ["add", "shout"]
    finally:
        await close(built)


async def test_a_url_where_nothing_listens_is_an_error(no_env_allowance):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    error = await build_error({"url": url, "allow_private_network": True, "connect_timeout": 5})
    assert error.code == "mcp_failed"
    assert f"MCP server `{url}`: could not connect" in str(error)


# -- DNS rebinding: the connection goes to the address the guard checked -------------------

REBOUND = "mcp.rebind.test"
CHECKED = "127.0.0.2"  # the address the guard checks: nothing listens there (no traffic leaves)


class _Recorder(BaseHTTPRequestHandler):
    """An internal service on 127.0.0.1: records the Host of every request, answers 404."""

    seen: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        self.seen.append(self.headers.get("Host", ""))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_DELETE = _answer


@pytest.fixture
def internal_service() -> Iterator[tuple[int, list[str]]]:
    _Recorder.seen = []
    service = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=service.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(service.server_address[1]), _Recorder.seen
    finally:
        service.shutdown()
        service.server_close()


def rebinding_dns(monkeypatch: pytest.MonkeyPatch, answers: list[str]) -> list[str]:
    """Make REBOUND resolve to answers[0] first, then answers[1] on every later lookup
    (the process's getaddrinfo: what the guard and any HTTP client call)."""
    real = socket.getaddrinfo
    given: list[str] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode("ascii") if isinstance(host, bytes) else host  # httpx: bytes
        if name != REBOUND:
            return real(host, port, *args, **kwargs)
        address = answers[min(len(given), len(answers) - 1)]
        given.append(address)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 80)))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return given


async def test_a_name_rebound_to_loopback_after_the_check_cannot_reach_it(
    internal_service, monkeypatch, no_env_allowance
):
    port, seen = internal_service
    given = rebinding_dns(monkeypatch, [CHECKED, "127.0.0.1"])  # checked, then rebound
    url = f"http://{REBOUND}:{port}/mcp"
    error = await build_error({"url": url, "allow_private_network": True, "connect_timeout": 2})
    assert error.code == "mcp_failed"
    assert given == [CHECKED]  # resolved once, by the guard
    assert seen == []  # the connection went to the checked address, never to the rebound one


async def test_the_pinned_connection_keeps_the_name_in_the_host_header(
    internal_service, monkeypatch, no_env_allowance
):
    port, seen = internal_service
    given = rebinding_dns(monkeypatch, ["127.0.0.1", "10.9.9.9"])
    url = f"http://{REBOUND}:{port}/mcp"
    error = await build_error({"url": url, "allow_private_network": True, "connect_timeout": 5})
    assert error.code == "mcp_failed"  # the service is no MCP server
    assert given == ["127.0.0.1"]  # resolved once, by the guard
    assert seen and set(seen) == {f"{REBOUND}:{port}"}


# -- in an agent ---------------------------------------------------------------------------


@pytest.mark.slow
async def test_an_agent_calls_the_tools_of_an_mcp_server_and_a_toolset():
    from agno.agent import Agent
    from agno.models.openai.like import OpenAILike

    from nodeloom.testing.mock_llm import MockLLM

    script = {
        "rules": [
            {
                "times": 1,
                "tool_calls": [
                    {"name": "add", "arguments": {"a": 2, "b": 40}},
                    {"name": "current_datetime", "arguments": {"timezone": "UTC"}},
                ],
            },
            {"reply": "The sum is 42."},
        ]
    }
    mcp, built = await build({"command": COMMAND})
    tools = toolset.build({"toolsets": ["datetime"]}, context())
    model = None
    try:
        async with MockLLM(script) as llm:
            model = OpenAILike(id="mock", base_url=llm.base_url, api_key="test")
            agent = Agent(model=model, tools=[*mcp.tools, *tools.tools], telemetry=False)
            output = await agent.arun("What is 2 + 40?")
            assert output.content == "The sum is 42."
            first, second = llm.requests
            assert sorted(first.tools) == ["add", "current_datetime", "shout"]
            results = [m["content"] for m in second.messages if m.get("role") == "tool"]
            assert results[0] == "42"
            assert results[1].endswith("+00:00")
    finally:
        if model is not None and model.async_client is not None:
            await model.async_client.close()  # Agno leaves its HTTP client open
        await close(built)


@pytest.mark.slow
def test_a_stdio_server_dies_when_the_nodeloom_process_is_killed(tmp_path):
    """SIGKILL of `nodeloom run` while the agent waits on a slow tool call of a stdio
    server: the server and the process it started die at once, and the side effects they
    were about to have never happen (they do not outlive the run that started them)."""
    server_pid, target = tmp_path / "server.pid", tmp_path / "written"
    flow = graph(
        node("start", "chat-start"),
        node("a", "agent", name="Helper"),
        node(
            "mcp",
            "mcp-server",
            command=COMMAND,
            env={"ARITH_PID_FILE": str(server_pid), "ARITH_SLOW_TOOL": "1"},
        ),
        edge("start", "a"),
        edge("mcp", "a", "tools", "tools"),
    )
    call = {"name": "write_later", "arguments": {"path": str(target), "seconds": 1.5}}
    script = {
        "rules": [
            {"match": {"tool_result": False}, "tool_calls": [call]},
            {"reply": "written"},
        ]
    }
    (tmp_path / "flow.json").write_text(json.dumps(flow))
    (tmp_path / "llm.json").write_text(json.dumps(script))
    command = ["run", "flow.json", "--input", "hi", "--ephemeral", "--mock-llm", "llm.json"]
    process = subprocess.Popen(
        [sys.executable, "-m", "nodeloom", *command],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started = Path(str(target) + ".started")
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert time.monotonic() < deadline and process.poll() is None, "no tool call"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    pids = [int(pid) for pid in started.read_text().split()]  # the server and its child
    assert pids[0] == int(server_pid.read_text())
    deadline = time.monotonic() + 1
    while not all(process_gone(pid) for pid in pids):
        assert time.monotonic() < deadline, f"the server or its child outlived nodeloom: {pids}"
        time.sleep(0.01)
    time.sleep(2)  # past the moment the tool and the child would have written
    assert not target.exists() and not Path(str(target) + ".child").exists()
