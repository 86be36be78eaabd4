"""The Toolset node: built-in toolsets and Python functions, built for real and called
the way Agno calls them (through `agno.tools.function.Function` and toolkit functions).

http_fetch runs against a real HTTP server on 127.0.0.1, a loopback address: allowed
only with `allow_private_network` (or NODELOOM_ALLOW_PRIVATE_NETWORK=1).
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from agno.tools import Toolkit
from agno.tools.function import Function

from nodeloom.errors import NodeError
from nodeloom.net import ENV_ALLOW_PRIVATE
from nodeloom.nodes.tools.toolset.definition import TOOLSETS, check_toolset, definition
from nodeloom.nodes.tools.toolset.executor import executor
from nodeloom.paths import default_services
from nodeloom.plugins.contract import BuildContext, ToolsResult
from nodeloom.tools.builtins import MAX_FETCH_CHARS, build_toolset

TOOLS_FILE = '''
"""Tools for the Toolset tests."""

from agno.tools import Toolkit, tool

VALUE = 3


def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text to count the words of.
    """
    return len(text.split())


async def reverse(text: str) -> str:
    """The text backwards."""
    return text[::-1]


class Helper:
    def method(self) -> str:
        return "x"


@tool
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


class Letters(Toolkit):
    def __init__(self) -> None:
        super().__init__(name="letters", tools=[self.first_letter])

    def first_letter(self, text: str) -> str:
        """The first letter of a text."""
        return text[:1]


letters = Letters()
unnamed = lambda text: text  # noqa: E731
'''


def context(**overrides: Any) -> BuildContext:
    return BuildContext(
        node_id="t",
        node_name="T",
        node_type="toolset",
        chat_id=None,
        services=default_services(),
        **overrides,
    )


def build(data: dict[str, Any], **overrides: Any) -> ToolsResult:
    return executor.build(data, context(**overrides))


def build_error(data: dict[str, Any], **overrides: Any) -> NodeError:
    with pytest.raises(NodeError) as caught:
        build(data, **overrides)
    assert caught.value.retryable is False
    return caught.value


def agno_function(tool: Any) -> Function:
    """The Function Agno makes of a plain function: schema from signature and docstring."""
    function = Function.from_callable(tool)
    function.process_entrypoint()
    return function


async def call(tool: Any, **arguments: Any) -> Any:
    result = agno_function(tool).entrypoint(**arguments)  # type: ignore[misc]
    if hasattr(result, "__await__"):
        result = await result
    return result


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_tools.py"
    path.write_text(TOOLS_FILE)
    return path


# -- the definition ------------------------------------------------------------------------


def test_the_toolset_is_a_structural_node_with_one_tools_output():
    assert definition.id == "toolset"
    assert definition.category == "tools"
    assert definition.execution_mode == "structural"
    assert definition.inputs == ()
    assert [(port.id, port.socket) for port in definition.outputs] == [("tools", "tools")]
    assert definition.side_effects == "external"
    assert {p.id: p.default for p in definition.parameters} == {
        "toolsets": [],
        "functions": [],
        "allow_private_network": False,
    }


def test_every_built_in_toolset_offers_the_tool_names_the_definition_lists():
    for name, names in TOOLSETS.items():
        _, built = build_toolset(name, {})
        assert built == list(names), name


def test_the_check_finds_an_unknown_toolset_with_a_did_you_mean():
    issues = check_toolset({"toolsets": ["calculater"]})
    assert len(issues) == 1
    field, message = issues[0]
    assert field == "toolsets"
    assert "did you mean 'calculator'" in message
    assert "calculator, datetime, http_fetch" in message


def test_the_check_finds_a_reference_that_does_not_parse():
    issues = check_toolset({"functions": ["tools.word_count"]})
    assert [field for field, _ in issues] == ["functions"]
    assert "package.module:function" in issues[0][1]
    assert check_toolset({"functions": ["my tools.py#f"]}) == []  # a path may hold spaces
    assert check_toolset({"functions": ["pkg.mod:not a name"]})[0][0] == "functions"
    assert check_toolset({"functions": ["pkg-x:f"]})[0][0] == "functions"


def test_the_check_finds_an_empty_toolset():
    assert [field for field, _ in check_toolset({})] == ["toolsets"]
    assert [field for field, _ in check_toolset({"toolsets": [], "functions": []})] == ["toolsets"]


def test_the_check_accepts_valid_parameters_and_leaves_expressions_alone():
    assert check_toolset({"toolsets": ["calculator"], "functions": ["json:dumps"]}) == []
    assert check_toolset({"functions": ["tools/my_tools.py#word_count", "pkg.mod#f"]}) == []
    assert check_toolset({"toolsets": "{{ $vars.toolsets }}"}) == []
    assert check_toolset({"toolsets": ["{{ $vars.extra }}"], "functions": ["{{ $vars.f }}"]}) == []


def test_the_check_rejects_values_that_are_not_lists():
    assert check_toolset({"toolsets": "calculator"})[0][0] == "toolsets"
    assert check_toolset({"toolsets": [], "functions": {"a": 1}})[0][0] == "functions"
    assert check_toolset({"toolsets": [{"name": "calculator"}]})[0][0] == "toolsets"


# -- built-in toolsets ---------------------------------------------------------------------


async def test_the_calculator_is_agnos_calculator_toolkit_and_its_functions_compute():
    result = build({"toolsets": ["calculator"]})
    assert result.names == list(TOOLSETS["calculator"])
    assert result.source == "toolset: calculator"
    [toolkit] = result.tools
    assert isinstance(toolkit, Toolkit)
    functions = toolkit.functions
    assert json.loads(functions["add"].entrypoint(a=2, b=3))["result"] == 5  # type: ignore[misc]
    assert json.loads(functions["multiply"].entrypoint(a=6, b=7))["result"] == 42  # type: ignore[misc]
    divided = json.loads(functions["divide"].entrypoint(a=1, b=0))  # type: ignore[misc]
    assert "error" in divided
    assert json.loads(functions["factorial"].entrypoint(n=5))["result"] == 120  # type: ignore[misc]
    assert json.loads(functions["is_prime"].entrypoint(n=97))["result"] is True  # type: ignore[misc]


def test_the_calculator_refuses_numbers_that_would_hold_the_cpu_for_minutes():
    [toolkit] = build({"toolsets": ["calculator"]}).tools
    factorial = json.loads(toolkit.functions["factorial"].entrypoint(n=10**7))
    assert factorial["error"] == "n must be at most 1000"
    prime = json.loads(toolkit.functions["is_prime"].entrypoint(n=10**18 + 9))
    assert "at most" in prime["error"]


async def test_current_datetime_answers_iso_8601_in_the_named_time_zone():
    result = build({"toolsets": ["datetime"]})
    assert result.names == ["current_datetime"]
    [tool] = result.tools
    function = agno_function(tool)
    assert function.name == "current_datetime"
    assert "timezone" in function.parameters["properties"]
    utc = datetime.fromisoformat(await call(tool))
    assert utc.utcoffset() == timedelta(0)
    assert abs((datetime.now(utc.tzinfo) - utc).total_seconds()) < 5
    paris = datetime.fromisoformat(await call(tool, timezone="Europe/Paris"))
    assert paris.utcoffset() in (timedelta(hours=1), timedelta(hours=2))
    assert abs((paris - utc).total_seconds()) < 5


async def test_current_datetime_answers_an_unknown_time_zone_with_a_message():
    [tool] = build({"toolsets": ["datetime"]}).tools
    answer = await call(tool, timezone="Mars/Olympus_Mons")
    assert "Unknown time zone 'Mars/Olympus_Mons'" in answer
    assert "Europe/Paris" in answer
    assert "Unknown time zone" in await call(tool, timezone="../../etc/passwd")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.seen.append((self.command, self.path))
        if self.path == "/hello":
            self._send(200, "héllo from the test server".encode(), "text/plain; charset=utf-8")
        elif self.path == "/json":
            self._send(200, b'{"answer": 42}', "application/json")
        elif self.path == "/big":
            self._send(200, b"x" * (MAX_FETCH_CHARS + 500), "text/plain")
        elif self.path == "/image":
            self._send(200, b"\x89PNG\r\n\x1a\n" + bytes(100), "image/png")
        elif self.path == "/moved":
            self._send(302, b"", "text/plain", {"Location": "/hello"})
        else:
            self._send(404, b"no such page", "text/plain")

    do_HEAD = do_GET

    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    seen: list[tuple[str, str]]


@pytest.fixture
def web() -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def base(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def no_env_allowance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_ALLOW_PRIVATE, raising=False)


async def test_http_fetch_fetches_from_a_private_address_when_allowed(web, no_env_allowance):
    result = build({"toolsets": ["http_fetch"], "allow_private_network": True})
    assert result.names == ["http_fetch"]
    [tool] = result.tools
    function = agno_function(tool)
    assert function.name == "http_fetch"
    assert set(function.parameters["properties"]) == {"url", "method"}
    assert function.parameters["required"] == ["url"]
    answer = await call(tool, url=f"{base(web)}/hello")
    assert answer.splitlines()[0] == "HTTP 200 OK"
    assert "Content-Type: text/plain; charset=utf-8" in answer
    assert answer.endswith("héllo from the test server")
    assert '{"answer": 42}' in await call(tool, url=f"{base(web)}/json")


async def test_http_fetch_is_refused_a_private_address_by_default(web, no_env_allowance):
    [tool] = build({"toolsets": ["http_fetch"]}).tools
    answer = await call(tool, url=f"{base(web)}/hello")
    assert "refused to connect to 127.0.0.1 (loopback address)" in answer
    assert "allow_private_network: true on the Toolset" in answer
    assert web.seen == []


async def test_http_fetch_follows_the_environment_switch(web, monkeypatch):
    monkeypatch.setenv(ENV_ALLOW_PRIVATE, "1")
    [tool] = build({"toolsets": ["http_fetch"]}).tools
    assert "HTTP 200 OK" in await call(tool, url=f"{base(web)}/hello")


async def test_http_fetch_truncates_long_bodies_and_hides_binary_ones(web, no_env_allowance):
    [tool] = build({"toolsets": ["http_fetch"], "allow_private_network": True}).tools
    big = await call(tool, url=f"{base(web)}/big")
    assert big.endswith(
        f"[truncated: the first {MAX_FETCH_CHARS} of {MAX_FETCH_CHARS + 500} characters]"
    )
    body = big.split("\n\n", 1)[1]
    assert body.count("x") == MAX_FETCH_CHARS
    image = await call(tool, url=f"{base(web)}/image")
    assert "(binary content, 108 bytes, not shown)" in image
    assert "PNG" not in image


async def test_http_fetch_reports_status_redirects_head_and_bad_input_as_text(
    web, no_env_allowance
):
    [tool] = build({"toolsets": ["http_fetch"], "allow_private_network": True}).tools
    missing = await call(tool, url=f"{base(web)}/nothing")
    assert missing.splitlines()[0] == "HTTP 404 Not Found"
    assert missing.endswith("no such page")
    moved = await call(tool, url=f"{base(web)}/moved")
    assert f"URL: {base(web)}/hello" in moved
    assert moved.endswith("héllo from the test server")
    head = await call(tool, url=f"{base(web)}/hello", method="HEAD")
    assert head.splitlines()[0] == "HTTP 200 OK"
    assert "héllo" not in head
    assert ("HEAD", "/hello") in web.seen
    assert "use GET or HEAD" in await call(tool, url=f"{base(web)}/hello", method="DELETE")
    assert ("DELETE", "/hello") not in web.seen
    assert "is not an http:// or https:// URL" in await call(tool, url="file:///etc/passwd")


async def test_http_fetch_reports_a_refused_connection_as_text(no_env_allowance):
    [tool] = build({"toolsets": ["http_fetch"], "allow_private_network": True}).tools
    closed = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    port = closed.server_address[1]
    closed.server_close()  # nothing listens there any more
    answer = await call(tool, url=f"http://127.0.0.1:{port}/")
    assert answer.startswith(f"http_fetch could not fetch http://127.0.0.1:{port}/")


# -- functions by reference ----------------------------------------------------------------


async def test_a_function_in_a_file_is_loaded_by_absolute_path(tools_file):
    result = build({"functions": [f"{tools_file}#word_count"]})
    assert result.names == ["word_count"]
    assert result.source == f"toolset: {tools_file}#word_count"
    [tool] = result.tools
    function = agno_function(tool)
    assert function.description and "Count the words" in function.description
    assert function.parameters["properties"]["text"]["type"] == "string"
    assert await call(tool, text="one two three") == 3


async def test_a_relative_path_starts_at_the_working_directory(tools_file, monkeypatch):
    monkeypatch.chdir(tools_file.parent)
    result = build({"functions": ["my_tools.py#reverse", "./my_tools.py#shout"]})
    assert result.names == ["reverse", "shout"]
    reverse, shout = result.tools
    assert await call(reverse, text="abc") == "cba"
    assert isinstance(shout, Function)  # Agno's @tool: given to the agent as it is
    assert shout.entrypoint is not None
    assert shout.entrypoint(text="hi") == "HI"


def test_a_file_is_imported_under_a_module_name_of_its_own(tools_file, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "my_tools.py").write_text("def word_count(text: str) -> int:\n    return -1\n")
    [first] = build({"functions": [f"{tools_file}#word_count"]}).tools
    [second] = build({"functions": [f"{other / 'my_tools.py'}#word_count"]}).tools
    assert first.__module__ != second.__module__
    assert first.__module__.startswith("nodeloom_functions_")
    assert first("a b") == 2
    assert second("a b") == -1
    assert sys.modules[first.__module__].__file__ == str(tools_file)


def test_a_file_can_import_its_neighbours(tmp_path):
    (tmp_path / "helpers_for_toolset_test.py").write_text("def twice(x):\n    return 2 * x\n")
    (tmp_path / "uses_helper.py").write_text(
        "from helpers_for_toolset_test import twice\n\n"
        "def double(x: int) -> int:\n    '''Double x.'''\n    return twice(x)\n"
    )
    try:
        [tool] = build({"functions": [f"{tmp_path / 'uses_helper.py'}#double"]}).tools
        assert tool(21) == 42
        assert str(tmp_path) not in sys.path  # the import path is put back
    finally:
        sys.modules.pop("helpers_for_toolset_test", None)


def unique_module(tmp_path: Path) -> str:
    name = f"toolset_test_tools_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(TOOLS_FILE)
    return name


async def test_a_function_in_a_module_is_loaded_by_module_path(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    name = unique_module(tmp_path)
    result = build({"functions": [f"{name}:word_count", f"{name}#reverse", f"{name}:letters"]})
    assert result.names == ["word_count", "reverse", "first_letter"]
    word_count, reverse, letters = result.tools
    assert await call(word_count, text="a b") == 2
    assert await call(reverse, text="ab") == "ba"
    assert isinstance(letters, Toolkit)
    assert letters.functions["first_letter"].entrypoint(text="xyz") == "x"  # type: ignore[misc]


def test_the_working_directory_is_importable(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = unique_module(tmp_path)
    path_before = list(sys.path)
    [tool] = build({"functions": [f"{name}:word_count"]}).tools
    assert tool("a b c") == 3
    assert sys.path == path_before


def test_a_standard_library_function_can_be_a_tool():
    result = build({"functions": ["json:dumps"]})
    assert result.names == ["dumps"]
    assert result.tools == [json.dumps]


def test_toolsets_and_functions_combine_in_order(tools_file):
    result = build(
        {"toolsets": ["datetime", "calculator"], "functions": [f"{tools_file}#word_count"]}
    )
    assert result.names == ["current_datetime", *TOOLSETS["calculator"], "word_count"]
    assert result.source == f"toolset: datetime, calculator, {tools_file}#word_count"


# -- errors --------------------------------------------------------------------------------


def test_an_unknown_toolset_is_an_error_with_a_did_you_mean():
    error = build_error({"toolsets": ["calculater"]})
    assert error.code == "tool_not_found"
    assert "no built-in toolset 'calculater'" in str(error)
    assert "did you mean 'calculator'" in str(error)
    assert "built-in toolsets: calculator, datetime, http_fetch" in str(error)


def test_an_empty_toolset_is_an_error():
    for data in ({}, {"toolsets": [], "functions": []}, {"toolsets": None}):
        error = build_error(data)
        assert error.code == "no_tools"
        assert "no tool" in str(error)


def test_a_reference_that_does_not_parse_is_an_error():
    error = build_error({"functions": ["word_count"]})
    assert error.code == "tool_not_found"
    assert "'word_count' names no function" in str(error)
    assert "'package.module:function' or 'path/to/file.py#function'" in str(error)
    assert build_error({"functions": ["tools.txt#f"]}).code == "tool_not_found"
    assert build_error({"functions": [42]}).code == "tool_not_found"


def test_a_module_that_does_not_import_is_an_error_naming_the_reference():
    error = build_error({"functions": ["no_such_module_for_toolset_tests:run"]})
    assert error.code == "tool_not_found"
    message = str(error)
    assert "'no_such_module_for_toolset_tests:run'" in message
    assert "ModuleNotFoundError: No module named 'no_such_module_for_toolset_tests'" in message
    assert "working directory" in message


def test_a_file_that_does_not_import_is_an_error_naming_the_import_error(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_dependency_for_toolset_tests\n\ndef f():\n    pass\n")
    error = build_error({"functions": [f"{broken}#f"]})
    assert error.code == "tool_not_found"
    assert f"'{broken}#f'" in str(error)
    assert "ModuleNotFoundError: No module named 'no_such_dependency_for_toolset_tests'" in str(
        error
    )
    assert not any(
        name.startswith("nodeloom_functions_") and getattr(module, "__file__", None) == str(broken)
        for name, module in sys.modules.items()
    )


def test_a_file_with_a_syntax_error_or_an_exit_is_an_error(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n    pass\n")
    assert "SyntaxError" in str(build_error({"functions": [f"{bad}#f"]}))
    quits = tmp_path / "quits.py"
    quits.write_text("import sys\nsys.exit(2)\n")
    assert "sys.exit(2)" in str(build_error({"functions": [f"{quits}#f"]}))


def test_a_missing_file_is_an_error_naming_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    error = build_error({"functions": ["tools/missing.py#f"]})
    assert error.code == "tool_not_found"
    assert f"no file {tmp_path / 'tools' / 'missing.py'}" in str(error)
    assert "relative paths start at the working directory" in str(error)


def test_a_missing_function_is_an_error_with_a_did_you_mean(tools_file):
    error = build_error({"functions": [f"{tools_file}#word_cont"]})
    assert error.code == "tool_not_found"
    assert "has no attribute 'word_cont'" in str(error)
    assert "did you mean 'word_count'" in str(error)
    assert "has no attribute 'nothing'" in str(build_error({"functions": ["json:nothing"]}))


def test_something_that_is_not_a_named_function_is_an_error(tools_file):
    value = build_error({"functions": [f"{tools_file}#VALUE"]})
    assert value.code == "tool_not_found"
    assert "names a int, which is not callable" in str(value)
    assert "names a class (Helper)" in str(build_error({"functions": [f"{tools_file}#Helper"]}))
    assert "without a usable name" in str(build_error({"functions": [f"{tools_file}#unnamed"]}))


def test_a_tool_name_seen_twice_is_an_error(tools_file, tmp_path):
    twin = tmp_path / "twin.py"
    twin.write_text("def add(a: int, b: int) -> int:\n    '''Add.'''\n    return a + b\n")
    error = build_error({"toolsets": ["calculator"], "functions": [f"{twin}#add"]})
    assert error.code == "duplicate_tool"
    assert "two tools are named 'add' (toolset 'calculator' and function" in str(error)
    assert build_error({"functions": ["json:dumps", "json#dumps"]}).code == "duplicate_tool"


def test_parameters_of_the_wrong_shape_are_errors():
    error = build_error({"toolsets": "calculator"})
    assert error.code == "invalid_parameter"
    assert '`toolsets` must be a list such as ["calculator", "datetime"], not str' in str(error)
    assert build_error({"functions": "json:dumps"}).code == "invalid_parameter"


def test_a_parameter_known_only_in_the_flow_is_an_error():
    error = build_error({"toolsets": None}, deferred=frozenset({"toolsets"}))
    assert error.code == "invalid_parameter"
    assert "tools are built before the flow runs" in str(error)


def test_a_reference_in_a_file_resolves_a_dotted_attribute(tmp_path):
    path = tmp_path / "nested.py"
    path.write_text(
        textwrap.dedent(
            """
            class Tools:
                @staticmethod
                def ping() -> str:
                    '''Answer pong.'''
                    return "pong"
            """
        )
    )
    [tool] = build({"functions": [f"{path}#Tools.ping"]}).tools
    assert tool() == "pong"
