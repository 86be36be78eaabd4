"""pytest fixtures for testing flows against the mock LLM, and a guard against real
providers. Register it in the root conftest.py:

    pytest_plugins = ["nodeloom.testing.mock_llm.pytest_plugin"]

    mock_llm                  a started MockLLM (zero-config, in a thread, so sync and
                              async tests alike can use it); OPENAI_BASE_URL points at it
    no_real_llm               autouse: dummy provider keys, and provider URLs at a closed
                              loopback port, so a real call fails at once; a failing test
                              that reached that port gets a section saying so
    @pytest.mark.real_llm     leaves the environment alone for one test
    ini `no_real_llm = false` turns the guard off for a whole suite
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from nodeloom.testing.mock_llm.server import MockLLM

GUARD_URL = "http://127.0.0.1:9"  # the discard port: nothing listens on it
GUARD_KEY = "nodeloom-no-real-llm-in-tests"
GUARD_ENVIRONMENT = {
    "OPENAI_API_KEY": GUARD_KEY,
    "ANTHROPIC_API_KEY": GUARD_KEY,
    "OPENAI_BASE_URL": f"{GUARD_URL}/v1",
    "ANTHROPIC_BASE_URL": GUARD_URL,
    "OLLAMA_HOST": GUARD_URL,
}
GUARD_MESSAGE = (
    "This test reached for a real LLM provider. The no_real_llm guard "
    "(nodeloom.testing.mock_llm.pytest_plugin) points "
    + ", ".join(k for k in GUARD_ENVIRONMENT if not k.endswith("_KEY"))
    + f" at {GUARD_URL}, where nothing listens, and sets dummy API keys. Use the mock_llm "
    "fixture (base_url=mock_llm.base_url, or leave base_url unset: the fixture sets "
    "OPENAI_BASE_URL), or mark the test @pytest.mark.real_llm if it must call a provider."
)
_GUARD_ADDRESS = re.compile(r"127\.0\.0\.1:9(?!\d)")
_GUARDED = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "no_real_llm",
        type="bool",
        default=True,
        help="Point LLM provider settings at a closed port in every test (nodeloom).",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "real_llm: the test may call a real LLM provider (no no_real_llm guard)"
    )


@pytest.fixture(autouse=True)
def no_real_llm(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy provider keys and provider URLs at a closed loopback port (unless the test
    is marked `real_llm` or the ini option `no_real_llm` is false)."""
    if request.node.get_closest_marker("real_llm") or not _guard_enabled(request.config):
        return
    for name, value in GUARD_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    request.node.stash[_GUARDED] = True


def _guard_enabled(config: pytest.Config) -> bool:
    try:
        return bool(config.getini("no_real_llm"))
    except ValueError:  # the fixtures were imported without registering the plugin
        return True


@pytest.fixture
def mock_llm(no_real_llm: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[MockLLM]:
    """A MockLLM in zero-config mode, served from a thread for the test's duration.
    Load rules with `mock_llm.script(...)`; read `mock_llm.requests`."""
    from nodeloom.testing.mock_llm.server import MockLLM

    llm = MockLLM().start_in_thread()
    monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
    try:
        yield llm
    finally:
        llm.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if (
        report.failed
        and call.excinfo is not None
        and item.stash.get(_GUARDED, False)
        and reached_guard(call.excinfo.value)
    ):
        report.sections.append(("no_real_llm", GUARD_MESSAGE))
    return report


def reached_guard(error: BaseException) -> bool:
    """Whether `error`, its causes or its group members mention the guard's address (in
    their message, or as the URL of the request they carry)."""
    pending, seen = [error], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if _GUARD_ADDRESS.search(str(current)) or _GUARD_ADDRESS.search(_request_url(current)):
            return True
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
    return False


def _request_url(error: BaseException) -> str:
    try:  # httpx's errors raise RuntimeError when no request is attached
        request = getattr(error, "request", None)
    except RuntimeError:
        return ""
    url = getattr(request, "url", None)
    return "" if url is None else str(url)
