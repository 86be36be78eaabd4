"""The HTTP API, fuzzed from its own OpenAPI schema against a real `nodeloom serve`.

schemathesis reads `/openapi.json` and generates requests for every operation, ones that fit
the schema and ones that break it: whatever they hold, the server answers without a 5xx
(`500 internal_error` is a bug, never the answer to bad input; docs/api.md) and is still
healthy after. And every operation refuses a request without a token.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
import requests
import schemathesis.openapi
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from .conftest import Server

EXAMPLES = 40  # per operation: the whole fuzz stays well under a minute
OPEN = {"/health", "/api/health"}  # no token (codes only); a webhook route: its own auth


def _operations(server: Server) -> list[tuple[str, str]]:
    document = httpx.get(f"{server.url}/openapi.json", timeout=10).json()
    return [
        (method.upper(), path)
        for path, item in document["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    ]


def _needs_a_token(path: str) -> bool:
    """Webhooks and Send and Wait's decision links carry their own auth (a secret, a
    signature): tests/server/test_hooks.py, tests/server/test_decisions.py."""
    return path not in OPEN and "webhook" not in path and not path.startswith("/api/decisions/")


def _cases(operation: Any) -> st.SearchStrategy[Any]:
    """Requests that fit the schema and, where the operation takes any input, ones that
    break it."""
    strategies = [operation.as_strategy(GenerationMode.POSITIVE)]
    if operation.path_parameters or operation.query or operation.body:
        strategies.append(operation.as_strategy(GenerationMode.NEGATIVE))
    return st.one_of(strategies)


@pytest.mark.slow
def test_no_generated_request_gets_a_server_error(server: Server) -> None:
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
    fuzzed = []
    with requests.Session() as session:
        session.headers["Authorization"] = f"Bearer {server.token}"
        for result in schema.get_all_operations():
            operation = result.ok()

            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(case=_cases(operation))
            def answers_without_a_server_error(case: Any) -> None:
                response = case.call(base_url=server.url, session=session, timeout=30)
                assert response.status_code < 500, (
                    f"{case.method} {case.formatted_path} answered {response.status_code}: "
                    f"{response.text[:2000]}\nreproduce: {case.as_curl_command()}"
                )

            answers_without_a_server_error()
            fuzzed.append((operation.method.upper(), operation.path))
    assert sorted(fuzzed) == sorted(_operations(server))


@pytest.mark.slow
def test_the_server_is_still_healthy_after_the_fuzz(server: Server) -> None:
    # Runs after the fuzz above, against the same (module-scoped) server.
    health = httpx.get(f"{server.url}/health", timeout=10)
    assert health.status_code == 200
    assert health.json()["status"] == "ok"
    log = server.log.read_text(encoding="utf-8", errors="replace")
    assert server.process.poll() is None, log
    assert "Traceback" not in log, log[-5000:]


def test_every_operation_but_health_answers_401_without_a_token(server: Server) -> None:
    anonymous = server.client(token=None)
    guarded = [(m, p) for m, p in _operations(server) if _needs_a_token(p)]
    assert len(guarded) > 10, guarded
    for method, path in guarded:
        response = anonymous.request(method, re.sub(r"\{[^}]+\}", "x", path))
        assert response.status_code == 401, f"{method} {path}: {response.status_code}"
        assert response.headers.get("www-authenticate", "").startswith("Bearer"), (method, path)
