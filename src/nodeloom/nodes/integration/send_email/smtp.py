"""Handing a message to the account's SMTP server (aiosmtplib), errors made readable.

TLS is required: `smtps://` starts with it, `smtp://` must upgrade with STARTTLS (the
send fails if the server does not offer it), unless the account says `?tls=none`. The
account's password never appears in a message.
"""

from __future__ import annotations

from typing import Any

import aiosmtplib

from nodeloom.errors import NodeError
from nodeloom.nodes.integration.send_email.message import Account


async def deliver(
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
