"""Send Email: one message over SMTP with TLS, the account taken from a credential."""

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port


def check_email(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    account = data.get("account")
    if isinstance(account, str) and account.strip() and "{{" not in account:
        issues.append(
            (
                "account",
                "the SMTP account URL holds a password: save it as a credential (nodeloom "
                "credentials set NAME) and write {{ $credentials.NAME }} here",
            )
        )
    for field in ("to", "cc", "bcc", "from"):
        value = data.get(field)
        if isinstance(value, str) and "{{" not in value:
            for address in value.split(","):
                if address.strip() and "@" not in address:
                    issues.append((field, f"{address.strip()!r} is not an email address"))
    if data.get("to") in (None, "", []):
        issues.append(("to", "to is required: one address, or several separated by commas"))
    if not data.get("text") and not data.get("html"):
        issues.append(("text", "the message needs a body: set text, html or both"))
    return issues


definition = NodeDefinition(
    id="send-email",
    name="Send Email",
    category="integration",
    description="Sends an email over SMTP with TLS: to/cc/bcc, subject, a text and/or HTML "
    "body, and file attachments (file references from Read File).",
    icon="Mail",
    inputs=(
        Port(
            "input",
            required=False,
            description="Optional: the spine value, for expressions in the parameters ($json).",
        ),
    ),
    outputs=(Port("output", description="{message_id, recipients}: what the server accepted."),),
    parameters=(
        # Secret-capable: the account holds a password ({{ $credentials.NAME }}).
        Parameter(
            "account",
            "string",
            "Account",
            required=True,
            placeholder="{{ $credentials.smtp }}",
            description="A credential holding smtps://user:password@host:465 (TLS) or "
            "smtp://user:password@host:587 (STARTTLS, required); ?from=address sets the "
            "default sender.",
            secret=True,
        ),
        Parameter(
            "from",
            "string",
            "From",
            default="",
            placeholder="Reports <reports@example.com>",
            description="The sender; default the account's ?from=, else its user name.",
        ),
        Parameter(
            "to",
            "string",
            "To",
            required=True,
            hybrid=True,
            socket="json",
            placeholder="ada@example.com, grace@example.com",
            description="Addresses separated by commas, or a list.",
        ),
        Parameter("cc", "string", "Cc", default="", description="Like `to`."),
        Parameter(
            "bcc",
            "string",
            "Bcc",
            default="",
            description="Like `to`; they receive the message but appear in no header.",
        ),
        Parameter("subject", "string", "Subject", default="", hybrid=True, socket="string"),
        Parameter("text", "text", "Text body", default="", hybrid=True, socket="text"),
        Parameter(
            "html",
            "code",
            "HTML body",
            default="",
            language="html",
            description="With a text body too, the message offers both (multipart/alternative).",
        ),
        Parameter(
            "attachments",
            "json",
            "Attachments",
            default=[],
            hybrid=True,
            socket="json",
            description="A list of file references ({$ref: file:..., name, mime}, as Read File "
            "outputs); 25 MB in all at most.",
        ),
        Parameter(
            "timeout",
            "number",
            "Timeout (s)",
            default=60,
            minimum=1,
            maximum=600,
            description="Seconds the whole exchange with the server may take.",
        ),
    ),
    side_effects="external",
    output_shape={"message_id": "string", "recipients": "list"},
    check=check_email,
)
