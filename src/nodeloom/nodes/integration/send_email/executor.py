"""Send Email: build the message, then hand it to the account's server with aiosmtplib.

TLS is required: `smtps://` starts with it, `smtp://` must upgrade with STARTTLS (the
send fails if the server does not offer it), unless the account says `?tls=none`. The
account's password never appears in a message or an event.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiosmtplib

from nodeloom.errors import NodeError
from nodeloom.nodes.integration.send_email.message import (
    Account,
    addresses,
    build,
    invalid,
    read_account,
    read_attachments,
)
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext

DEFAULT_TIMEOUT = 60.0


class SendEmailExecutor:
    node_type = "send-email"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        account = read_account(data.get("account"))
        to = addresses(data.get("to"), "to")
        if not to:
            raise invalid("to", "Send Email needs at least one address in `to`.")
        cc, bcc = addresses(data.get("cc"), "cc"), addresses(data.get("bcc"), "bcc")
        senders = addresses(data.get("from") or account.sender or account.username, "from")
        if len(senders) != 1:
            raise invalid(
                "from",
                "Send Email needs one sender: set `from`, or ?from= in the account URL.",
            )
        text, html, subject = (_text(data, name) for name in ("text", "html", "subject"))
        if not text and not html:
            raise invalid("text", "Send Email needs a body: set `text`, `html` or both.")
        attachments = await asyncio.to_thread(read_attachments, data.get("attachments"))
        message = build(
            sender=senders[0],
            to=to,
            cc=cc,
            subject=subject,
            text=text,
            html=html,
            attachments=attachments,
        )
        timeout = data.get("timeout") or DEFAULT_TIMEOUT
        recipients = [_bare(address) for address in [*to, *cc, *bcc]]
        await _send(account, message, _bare(senders[0]), recipients, float(timeout))
        return ExecutionResult(
            {"output": {"message_id": message["Message-ID"], "recipients": recipients}}
        )


async def _send(
    account: Account, message: Any, sender: str, recipients: list[str], timeout: float
) -> None:
    try:
        errors, _ = await aiosmtplib.send(
            message,
            sender=sender,
            recipients=recipients,
            hostname=account.host,
            port=account.port,
            username=account.username,
            password=account.password,
            use_tls=account.security == "tls",
            start_tls=account.security == "starttls",
            timeout=timeout,
        )
    except aiosmtplib.SMTPAuthenticationError as exc:
        raise NodeError(
            f"the SMTP server {account.shown} refused the login ({exc.code}); check the "
            "account credential's user name and password.",
            code="smtp_auth",
            retryable=False,
            details={"field": "account"},
        ) from None
    except aiosmtplib.SMTPRecipientsRefused as exc:
        refused = ", ".join(error.recipient for error in exc.recipients)
        raise NodeError(
            f"the SMTP server {account.shown} refused every recipient: {refused}.",
            code="smtp_refused",
            retryable=False,
            details={"field": "to"},
        ) from None
    except aiosmtplib.SMTPResponseException as exc:
        raise NodeError(
            f"the SMTP server {account.shown} answered {exc.code}: {exc.message}",
            code="smtp_error",
            retryable=400 <= exc.code < 500,
            details={"field": "account"},
        ) from None
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
        raise NodeError(
            f"cannot send through {account.shown}: {_reason(exc)}. Check the "
            "host, the port and that the server offers TLS (smtps:// on 465, STARTTLS on 587).",
            code="smtp_error",
            retryable=True,
            details={"field": "account"},
        ) from None
    if errors:
        refused = ", ".join(sorted(errors))
        raise NodeError(
            f"the SMTP server {account.shown} accepted the message but refused {refused}.",
            code="smtp_refused",
            retryable=False,
            details={"field": "to", "refused": sorted(errors)},
        )


def _reason(exc: BaseException) -> str:
    return str(exc).strip().rstrip(".") or type(exc).__name__


def _bare(address: str) -> str:
    return address.rsplit("<", 1)[-1].rstrip(">").strip()


def _text(data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise invalid(name, f"`{name}` must be text.")
    return value


executor = SendEmailExecutor()
