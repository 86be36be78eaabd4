"""Send and Wait end to end: a real `nodeloom serve`, a real SMTP server on loopback; the
emailed link, followed by an HTTP client, resumes the run; each link works once."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from nodeloom.testing.builders import edge, graph, node
from nodeloom.testing.smtp import SmtpServer, smtp_server

from .conftest import Server, free_port, start_server, stop_server

LINK = re.compile(r"(Approve|Reject): (http://\S+)")


@pytest.fixture(scope="module")
def mail() -> Iterator[SmtpServer]:
    with smtp_server() as running:
        yield running


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, mail: SmtpServer) -> Iterator[Server]:
    port = free_port()
    environment = {
        "NODELOOM_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "SSL_CERT_FILE": mail.cert_file,  # the server trusts the SMTP server's certificate
    }
    started = start_server(tmp_path_factory.mktemp("server"), environment=environment, port=port)
    try:
        response = started.client().put("/api/credentials/smtp", json={"value": mail.url})
        assert response.status_code == 200, response.text
        yield started
    finally:
        stop_server(started)


def ask(subject: str, **data: Any) -> dict[str, Any]:
    return graph(
        node(
            "ask",
            "send-and-wait",
            account="{{ $credentials.smtp }}",
            **{"from": "flows@example.com"},
            to="boss@example.com",
            subject=subject,
            text="May we ship?",
            **data,
        ),
        node("shipped", "json-transform", expression='"shipped"'),
        edge("ask", "shipped", "approve"),
    )


def start(api: httpx.Client, document: dict[str, Any]) -> str:
    saved = api.post(
        "/api/flows", json={"name": document["nodes"][0]["data"]["subject"], "document": document}
    )
    assert saved.status_code == 201, saved.text
    started = api.post(f"/api/flows/{saved.json()['flow_id']}/runs", json={})
    assert started.status_code == 202, started.text
    return str(started.json()["run_id"])


def wait_for(api: httpx.Client, run_id: str, *states: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        run = api.get(f"/api/runs/{run_id}").json()
        if run["status"] in states:
            return dict(run)
        time.sleep(0.05)
    events = api.get(f"/api/runs/{run_id}/events", headers={"Accept": "application/json"})
    pytest.fail(f"run {run_id} is {run['status']}, not {states}: {run} {events.text[:3000]}")


def links(mail: SmtpServer, subject: str) -> dict[str, str]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for received in mail.messages:
            if received.message["Subject"] == subject:
                text = received.message.get_body(("plain",)).get_content()
                return {word.lower(): url for word, url in LINK.findall(text)}
        time.sleep(0.05)
    pytest.fail(f"no email with subject {subject!r} arrived")


def test_the_approve_link_followed_by_an_http_client_resumes_the_run(server, mail) -> None:
    api = server.client()
    run_id = start(api, ask("Ship 1.0?"))
    wait_for(api, run_id, "paused")
    found = links(mail, "Ship 1.0?")
    assert set(found) == {"approve", "reject"}
    assert found["approve"].startswith(f"{server.url}/api/decisions/")

    visitor = httpx.Client(timeout=10)  # no token: the link is its own auth
    page = visitor.get(found["approve"])
    assert page.status_code == 200
    assert '<form method="post">' in page.text
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "paused"  # GET decides nothing

    decided = visitor.post(found["approve"])
    assert decided.status_code == 202, decided.text
    done = wait_for(api, run_id, "completed")
    outputs = {step["node_id"]: step["outputs"] for step in done["timeline"]}
    assert outputs["ask"] == {"approve": {"decision": "approve", "to": ["boss@example.com"]}}
    assert outputs["shipped"] == {"output": "shipped"}
    assert len([m for m in mail.messages if m.message["Subject"] == "Ship 1.0?"]) == 1

    again = visitor.post(found["reject"])
    assert again.status_code == 409
    assert "Already decided" in again.text
    visitor.close()


def test_the_reject_link_routes_to_reject_and_a_forged_link_is_refused(server, mail) -> None:
    api = server.client()
    run_id = start(api, ask("Ship 2.0?"))
    wait_for(api, run_id, "paused")
    found = links(mail, "Ship 2.0?")
    body, _, signature = found["reject"].rpartition("/")[2].partition(".")
    forged = found["reject"].replace(signature, signature[::-1])
    with httpx.Client(timeout=10) as visitor:
        assert visitor.post(forged).status_code == 404
        assert visitor.get(f"{server.url}/api/decisions/nonsense").status_code == 404
        assert api.get(f"/api/runs/{run_id}").json()["status"] == "paused"
        assert visitor.post(found["reject"]).status_code == 202
    done = wait_for(api, run_id, "completed")
    ask_step = next(step for step in done["timeline"] if step["node_id"] == "ask")
    assert list(ask_step["outputs"]) == ["reject"]
    assert body  # the payload is readable but holds no secret
    assert mail.password not in found["reject"]


def test_a_paused_run_reaches_timeout_by_itself_and_a_later_link_is_refused(server, mail) -> None:
    api = server.client()
    run_id = start(api, ask("Ship 3.0?", timeout=1))
    wait_for(api, run_id, "paused")
    found = links(mail, "Ship 3.0?")
    done = wait_for(api, run_id, "completed")  # the timer service woke it, within 20 s
    ask_step = next(step for step in done["timeline"] if step["node_id"] == "ask")
    assert list(ask_step["outputs"]) == ["timeout"]
    with httpx.Client(timeout=10) as visitor:
        assert visitor.post(found["approve"]).status_code == 409  # no longer waiting
