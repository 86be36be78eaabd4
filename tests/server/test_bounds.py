"""User regular expressions and JSONata cannot stall the server: a catastrophic pattern
against a webhook payload answers at once (RE2), a looping JSONata expression is stopped by
its node's timeout, and meanwhile other runs on the same server are not blocked."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from nodeloom.testing.builders import chain, node

from .conftest import Server
from .test_hooks import SECRET, hook_client, hooked, unique
from .test_runs import save

CATASTROPHIC = "(a+)+$"  # Python's re backtracks 2^40 times on 'a' * 40 + '!'
LOOP = "($f := function($x) { $f($x + 1) }; $f(1))"  # tail recursion: never returns


def post(server: Server, path: str, body: object) -> httpx.Response:
    with hook_client(server) as client:
        return client.post(
            f"/api/hooks/{path}", json=body, headers={"X-Nodeloom-Secret": SECRET}, timeout=60
        )


def test_a_catastrophic_regex_on_a_webhook_payload_answers_at_once(
    server: Server, api: httpx.Client
):
    path = unique("regex")
    save(
        api,
        chain(
            node("hook", "webhook-trigger", path=path, secret=SECRET),
            node("test", "conditional", field="body.text", operator="regex", value=CATASTROPHIC),
        ),
    )
    started = time.monotonic()
    answer = post(server, path, {"text": "a" * 40 + "!"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "completed"
    assert time.monotonic() - started < 5
    matched = post(server, path, {"text": "a" * 40})
    assert matched.json()["status"] == "completed"


def test_a_pattern_re2_cannot_run_is_refused_on_save_naming_node_and_field(api: httpx.Client):
    document = chain(
        node("hook", "webhook-trigger", path=unique("backref"), secret=SECRET),
        node("test", "conditional", name="Twice", field="body.text", operator="regex"),
    )
    document["nodes"][1]["data"]["value"] = "(a)\\1"
    response = api.post("/api/flows", json={"name": "backref", "document": document})
    assert response.status_code == 422, response.text
    [issue] = response.json()["error"]["issues"]
    assert issue["node_id"] == "test" and issue["field"] == "value"
    assert "invalid escape sequence" in issue["message"] and "backreferences" in issue["message"]


@pytest.mark.slow
def test_a_looping_jsonata_expression_is_stopped_by_its_node_timeout_and_blocks_no_other_run(
    server: Server, api: httpx.Client
):
    loop_path, other_path = unique("loop"), unique("other")
    save(
        api,
        chain(
            node("hook", "webhook-trigger", path=loop_path, secret=SECRET),
            node("spin", "json-transform", name="Spin", expression=LOOP, timeout=1.5),
        ),
    )
    save(api, hooked(other_path))
    with ThreadPoolExecutor(2) as pool:
        started = time.monotonic()
        looping = pool.submit(post, server, loop_path, {})
        time.sleep(0.3)  # the loop is running now
        other = post(server, other_path, {"name": "ada"})
        other_took = time.monotonic() - started
        answer = looping.result().json()
        loop_took = time.monotonic() - started
    assert other.json()["result"] == {"Shout": {"output": {"text": "ADA"}}}
    assert other_took < 1.4  # answered while the loop was still spinning
    error = answer["error"]
    assert error["code"] == "run_failed" and error["node_id"] == "spin", answer
    assert "timeout of 1.5 s" in error["message"]
    assert loop_took < 10
