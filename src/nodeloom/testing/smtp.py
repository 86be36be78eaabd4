"""A real SMTP server on loopback for tests (aiosmtpd, a dev dependency): TLS with a
self-signed certificate, a login, and the messages it received.

    with smtp_server(user="bot", password="pw") as server:
        os.environ["SSL_CERT_FILE"] = server.cert_file   # make clients trust it
        ... send to server.url (smtp://bot:pw@127.0.0.1:PORT) ...
        [message] = server.messages                   # .sender, .recipients, .message

`implicit_tls=True` serves TLS from the first byte (smtps://); otherwise the server
requires STARTTLS before the login and the mail.
"""

from __future__ import annotations

import datetime
import email
import email.policy
import ipaddress
import socket
import ssl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Received:
    sender: str
    recipients: list[str]
    message: EmailMessage


@dataclass
class SmtpServer:
    port: int
    user: str
    password: str
    cert_file: str
    implicit_tls: bool
    messages: list[Received] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        scheme = "smtps" if self.implicit_tls else "smtp"
        return f"{scheme}://{self.user}:{self.password}@127.0.0.1:{self.port}"


def self_signed(folder: Path) -> tuple[str, str]:
    """A certificate for 127.0.0.1 and localhost, and its key: (cert file, key file)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_file), str(key_file)


@contextmanager
def smtp_server(
    *, user: str = "bot", password: str = "s3cret-pw", implicit_tls: bool = False
) -> Iterator[SmtpServer]:
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    folder = Path(tempfile.mkdtemp(prefix="nodeloom-smtp-"))
    cert_file, key_file = self_signed(folder)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = SmtpServer(port, user, password, cert_file, implicit_tls)

    class Handler:
        async def handle_DATA(self, smtp: Any, session: Any, envelope: Any) -> str:
            parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
            server.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos), parsed))
            return "250 OK"

    def authenticate(smtp: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
        login, secret = data.login.decode(), data.password.decode()
        server.logins.append(login)
        return AuthResult(success=(login, secret) == (user, password), handled=False)

    options: dict[str, Any] = {
        "authenticator": authenticate,
        # With implicit TLS aiosmtpd does not see the TLS under it and would never offer
        # AUTH; the connection is TLS from its first byte all the same. It then checks a
        # login the client offers but does not demand one (aiosmtpd warns otherwise).
        "auth_required": not implicit_tls,
        "auth_require_tls": not implicit_tls,
    }
    if implicit_tls:
        controller = Controller(
            Handler(), hostname="127.0.0.1", port=port, ssl_context=context, **options
        )
    else:
        controller = Controller(
            Handler(),
            hostname="127.0.0.1",
            port=port,
            tls_context=context,
            require_starttls=True,
            **options,
        )
    controller.start()
    try:
        yield server
    finally:
        controller.stop()
