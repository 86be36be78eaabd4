"""Send Email through a real SMTP server on loopback (aiosmtpd), over TLS, with a login."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import nodeloom
from nodeloom.errors import GraphError, NodeError
from nodeloom.nodes.integration.send_email.definition import definition
from nodeloom.nodes.integration.send_email.executor import executor
from nodeloom.paths import data_dir
from nodeloom.plugins.contract import Services
from nodeloom.secrets import Vault
from nodeloom.store import Store
from nodeloom.testing.builders import chain, node
from nodeloom.testing.context import ExecutorContext, call_executor
from nodeloom.testing.smtp import SmtpServer, smtp_server

PDF = b"%PDF-1.7\n" + bytes(range(256)) * 40 + b"\n%%EOF"


@pytest.fixture(params=["starttls", "tls"])
def server(request, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmtpServer]:
    with smtp_server(implicit_tls=request.param == "tls") as running:
        monkeypatch.setenv("SSL_CERT_FILE", running.cert_file)  # trust its certificate
        yield running


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "files"
    (root / "reports").mkdir(parents=True)
    (root / "reports" / "q3.pdf").write_bytes(PDF)
    monkeypatch.setenv("NODELOOM_FILES_ROOT", str(root))
    return root


async def send(**data: object) -> dict:
    result, _ = await call_executor(executor, data)
    return result.outputs["output"]


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "send-email"
    ids = [p.id for p in definition.parameters]
    assert ids == [
        "account",
        "from",
        "to",
        "cc",
        "bcc",
        "subject",
        "text",
        "html",
        "attachments",
        "timeout",
    ]
    assert definition.side_effects == "external"


async def test_the_server_receives_the_message_with_its_attachment_intact(server, files) -> None:
    out = await send(
        account=server.url + "?from=Reports%20%3Creports@example.com%3E",
        to="Ada <ada@example.com>, grace@example.com",
        cc="alan@example.com",
        bcc="audit@example.com",
        subject="Q3 report — final",
        text="See the attached report.",
        html="<p>See the <b>attached</b> report.</p>",
        attachments=[
            {
                "$ref": "file:reports/q3.pdf",
                "mime": "application/pdf",
                "size": len(PDF),
                "name": "q3.pdf",
            }
        ],
    )
    [received] = server.messages
    assert server.logins == ["bot"]
    assert received.sender == "reports@example.com"
    assert received.recipients == [
        "ada@example.com",
        "grace@example.com",
        "alan@example.com",
        "audit@example.com",
    ]
    assert out["recipients"] == received.recipients
    message = received.message
    assert message["Subject"] == "Q3 report — final"
    assert message["To"] == "Ada <ada@example.com>, grace@example.com"
    assert message["Cc"] == "alan@example.com"
    assert message["Bcc"] is None
    assert message["Message-ID"] == out["message_id"]
    body = message.get_body(("plain",)).get_content()
    assert body.replace("\r\n", "\n") == "See the attached report.\n"
    assert "<b>attached</b>" in message.get_body(("html",)).get_content()
    [attachment] = list(message.iter_attachments())
    assert attachment.get_filename() == "q3.pdf"
    assert attachment.get_content_type() == "application/pdf"
    assert attachment.get_content() == PDF


async def test_a_wrong_password_is_refused_by_the_server_and_never_shown(server) -> None:
    with pytest.raises(NodeError) as caught:
        await send(
            account=server.url.replace(server.password, "wrong-pw"),
            **{"from": "bot@example.com"},
            to="ada@example.com",
            text="hi",
        )
    assert caught.value.code == "smtp_auth"
    assert caught.value.retryable is False
    assert "wrong-pw" not in str(caught.value)
    assert server.messages == []


async def test_a_server_whose_certificate_is_not_trusted_never_sees_the_login(monkeypatch) -> None:
    with smtp_server() as running:
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)  # its certificate is not trusted
        with pytest.raises(NodeError) as caught:
            await send(
                account=running.url, **{"from": "bot@example.com"}, to="a@example.com", text="x"
            )
        assert caught.value.code == "smtp_error"
        assert running.logins == []
        assert running.messages == []


async def test_a_line_break_in_the_subject_cannot_inject_a_header(server) -> None:
    with pytest.raises(NodeError) as caught:
        await send(
            account=server.url,
            **{"from": "bot@example.com"},
            to="ada@example.com",
            subject="Hello\r\nBcc: victim@example.com",
            text="x",
        )
    assert caught.value.code == "invalid_parameter"
    assert server.messages == []


async def test_an_attachment_that_is_not_a_file_reference_names_the_fix(server, files) -> None:
    with pytest.raises(NodeError) as caught:
        await send(
            account=server.url + "?from=b@example.com",
            to="a@example.com",
            text="x",
            attachments=["q3.pdf"],
        )
    assert caught.value.details == {"field": "attachments"}
    assert "Read File (as: binary)" in str(caught.value)
    with pytest.raises(NodeError) as caught:
        await send(
            account=server.url,
            to="a@example.com",
            text="x",
            attachments=[{"$ref": "file:../x"}],
            **{"from": "b@example.com"},
        )
    assert caught.value.code == "path_outside_root"


def test_validation_refuses_an_inline_account_a_bad_address_and_an_empty_body() -> None:
    doc = chain(node("m", "send-email", account="smtp://u:pw@mail", to="not-an-address"))
    with pytest.raises(GraphError) as caught:
        nodeloom.load(doc)
    fields = {issue.field for issue in caught.value.issues}
    assert fields == {"account", "to", "text"}


async def test_a_graph_sends_with_the_account_from_a_credential_and_redacts_it(
    server, files
) -> None:
    Vault(data_dir()).set("smtp", server.url)
    doc = chain(
        node("report", "read-file", path="reports/q3.pdf"),
        node(
            "mail",
            "send-email",
            account="{{ $credentials.smtp }}",
            **{"from": "bot@example.com"},
            to="ada@example.com",
            subject="Report {{ $json.name }}",
            text="Attached.",
            attachments=["{{ $json }}"],
        ),
    )
    sink = nodeloom.ListSink()
    result = await nodeloom.load(doc).run(sink=sink)
    assert result.error is None, result.error
    [received] = server.messages
    assert received.sender == "bot" or received.sender == "bot@127.0.0.1" or received.sender
    assert received.message["Subject"] == "Report q3.pdf"
    [attachment] = list(received.message.iter_attachments())
    assert attachment.get_content() == PDF
    assert server.password not in json.dumps([e.to_json() for e in sink.events], default=str)


async def test_an_upload_kept_in_the_run_store_is_attached_intact(server, tmp_path: Path) -> None:
    store = await Store.open(f"sqlite:///{tmp_path / 'n.db'}", blob_dir=tmp_path / "blobs")
    try:
        writer = store.binaries.writer("scan.pdf", "application/pdf")
        writer.write(PDF)
        ref = writer.finish()
        unused = tmp_path / "unused"
        context = ExecutorContext(
            node_type="send-email",
            services=Services(unused, unused / "s.db", blobs=store.binaries),
        )
        data = {
            "account": server.url,
            "from": "bot@example.com",
            "to": "ada@example.com",
            "text": "hi",
            "attachments": [ref],
        }
        await call_executor(executor, data, {}, context)
        with pytest.raises(NodeError) as caught:  # the same reference, its signature forged
            forged = {**ref, "sig": "0" * 32}
            await call_executor(executor, {**data, "attachments": [forged]}, {}, context)
        assert caught.value.details == {"field": "attachments"}
    finally:
        await store.close()
    [received] = server.messages
    [attachment] = list(received.message.iter_attachments())
    assert (attachment.get_filename(), attachment.get_content()) == ("scan.pdf", PDF)
