"""The parts of Send Email that do not talk to a server: the account URL, the addresses,
the MIME message with its attachments."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import getaddresses, make_msgid
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from nodeloom.errors import NodeError
from nodeloom.files import open_content, ref_path
from nodeloom.plugins.contract import BinaryStore
from nodeloom.values import kind_of

MAX_ATTACHMENTS_BYTES = 25 * 1024 * 1024
SECURITY = ("tls", "starttls", "none")


@dataclass(frozen=True)
class Account:
    host: str
    port: int
    username: str | None
    password: str | None
    security: str  # tls | starttls | none
    sender: str | None

    @property
    def shown(self) -> str:
        user = f"{self.username}@" if self.username else ""
        return f"{user}{self.host}:{self.port}"


def read_account(value: Any) -> Account:
    """smtps://user:pw@host[:465] or smtp://user:pw@host[:587][?tls=none][&from=...]."""
    if not isinstance(value, str) or not value.strip():
        raise invalid("account", "Send Email needs `account`: {{ $credentials.NAME }}.")
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise invalid(
            "account",
            "`account` is not an SMTP URL (its value is not shown: it holds a password). "
            "Expected smtps://user:password@smtp.example.com:465 or "
            "smtp://user:password@smtp.example.com:587.",
        )
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    security = "tls" if parts.scheme == "smtps" else query.get("tls", "starttls")
    if security not in SECURITY:
        raise invalid("account", f"`account` ?tls= must be one of {', '.join(SECURITY)}.")
    return Account(
        host=parts.hostname,
        port=port or (465 if security == "tls" else 587),
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        security=security,
        sender=query.get("from"),
    )


def addresses(value: Any, field: str) -> list[str]:
    """`a@x, B <b@y>` or a list of those -> ['a@x', 'B <b@y>'] (checked)."""
    if value is None or value == "":
        return []
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(item, str) for item in items):
        raise invalid(
            field, f"`{field}` must be addresses as text or a list of text; got {kind_of(value)}."
        )
    found: list[str] = []
    for name, address in getaddresses(items):
        if not address:
            continue
        if "@" not in address or any(c in address for c in "\r\n<> "):
            raise invalid(field, f"`{field}` has {address!r}, which is not an email address.")
        found.append(str(Address(display_name=name, addr_spec=address)) if name else address)
    return found


def build(
    *,
    sender: str,
    to: list[str],
    cc: list[str],
    subject: str,
    text: str,
    html: str,
    attachments: list[tuple[str, str, bytes]],
) -> EmailMessage:
    message = EmailMessage()
    try:
        message["From"] = sender
        message["To"] = ", ".join(to)
        if cc:
            message["Cc"] = ", ".join(cc)
        message["Subject"] = subject
    except ValueError as exc:  # a line break in a header: header injection
        raise invalid(
            "subject", f"a header would be malformed: {exc}. Remove line breaks."
        ) from None
    message["Message-ID"] = make_msgid(domain=sender.rsplit("@", 1)[-1].strip("> ") or None)
    if text:
        message.set_content(text)
        if html:
            message.add_alternative(html, subtype="html")
    else:
        message.set_content(html, subtype="html")
    for name, mime, content in attachments:
        maintype, _, subtype = mime.partition("/")
        message.add_attachment(
            content,
            maintype=maintype or "application",
            subtype=subtype or "octet-stream",
            filename=name,
        )
    return message


def read_attachments(value: Any, blobs: BinaryStore | None = None) -> list[tuple[str, str, bytes]]:
    """(name, mime, bytes) of each reference: a file under the files root or a blob of the
    run store (an upload, a download)."""
    if value is None or value == "":
        return []
    items = value if isinstance(value, list) else [value]
    found: list[tuple[str, str, bytes]] = []
    total = 0
    for index, item in enumerate(items):
        opened = open_content(item, blobs, "attachments")
        if opened is None:
            raise invalid(
                "attachments",
                f"attachment {index} is {kind_of(item)}, not a file reference; attach an "
                "upload, a download or a file read with Read File (as: binary), e.g. "
                '{"$ref": "file:reports/q3.pdf"}.',
            )
        with opened as file:
            content = file.read(MAX_ATTACHMENTS_BYTES - total + 1)
        total += len(content)
        if total > MAX_ATTACHMENTS_BYTES:
            raise invalid(
                "attachments",
                f"the attachments pass {MAX_ATTACHMENTS_BYTES // (1024 * 1024)} MB; most "
                "servers refuse such mail. Send a link instead.",
            )
        meta = item if isinstance(item, Mapping) else {}
        name = str(meta.get("name") or (ref_path(item) or "attachment").rsplit("/", 1)[-1])
        mime = str(meta.get("mime") or "application/octet-stream")
        found.append((name, mime, content))
    return found


@dataclass(frozen=True)
class Outgoing:
    """A message ready to build and send: checked addresses, body, attachments."""

    account: Account
    sender: str
    to: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str
    text: str
    html: str
    attachments: list[tuple[str, str, bytes]]

    @property
    def envelope_sender(self) -> str:
        return bare(self.sender)

    @property
    def recipients(self) -> list[str]:
        return [bare(address) for address in [*self.to, *self.cc, *self.bcc]]

    def message(self, *, text_after: str = "", html_after: str = "") -> EmailMessage:
        return build(
            sender=self.sender,
            to=self.to,
            cc=self.cc,
            subject=self.subject,
            text=self.text + text_after if self.text or not self.html else "",
            html=self.html + html_after if self.html else "",
            attachments=self.attachments,
        )


async def compose(data: Mapping[str, Any], blobs: BinaryStore | None = None) -> Outgoing:
    """The node's parameters, checked, with the attachments read (in a thread)."""
    account = read_account(data.get("account"))
    to = addresses(data.get("to"), "to")
    if not to:
        raise invalid("to", "the email needs at least one address in `to`.")
    senders = addresses(data.get("from") or account.sender or account.username, "from")
    if len(senders) != 1:
        raise invalid(
            "from", "the email needs one sender: set `from`, or ?from= in the account URL."
        )
    text, html, subject = (_text(data, name) for name in ("text", "html", "subject"))
    if not text and not html:
        raise invalid("text", "the email needs a body: set `text`, `html` or both.")
    return Outgoing(
        account=account,
        sender=senders[0],
        to=to,
        cc=addresses(data.get("cc"), "cc"),
        bcc=addresses(data.get("bcc"), "bcc"),
        subject=subject,
        text=text,
        html=html,
        attachments=await asyncio.to_thread(read_attachments, data.get("attachments"), blobs),
    )


def bare(address: str) -> str:
    """`Ada <ada@example.com>` -> `ada@example.com`."""
    return address.rsplit("<", 1)[-1].rstrip(">").strip()


def _text(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise invalid(name, f"`{name}` must be text.")
    return value


def invalid(field: str, message: str) -> NodeError:
    return NodeError(message, code="invalid_parameter", retryable=False, details={"field": field})
