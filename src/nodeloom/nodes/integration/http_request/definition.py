"""HTTP Request: call an HTTP API and route the answer by its status."""

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


def check_request(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Inline values a generic parameter check cannot judge (expressions pass)."""
    issues: list[tuple[str, str]] = []
    url = data.get("url")
    if isinstance(url, str) and url.strip() and "{{" not in url:
        scheme = url.strip().lower().split("://", 1)[0] if "://" in url else ""
        if scheme not in ("http", "https"):
            issues.append(
                (
                    "url",
                    "url must start with http:// or https://, e.g. https://api.example.com/items",
                )
            )
    for field, example in (("headers", '{"Accept": "application/json"}'), ("query", '{"page": 2}')):
        value = data.get(field)
        if value is None or (isinstance(value, str) and "{{" in value):
            continue
        if not isinstance(value, dict):
            issues.append((field, f"{field} must be a JSON object such as {example}"))
    return issues


definition = NodeDefinition(
    id="http-request",
    name="HTTP Request",
    category="integration",
    description="Sends an HTTP request. A 2xx or 3xx answer goes out on `response`, a 4xx "
    "or 5xx on `error`, as {status, headers, body}; `status` always gets the status code. "
    "Private, loopback and link-local addresses are refused unless allowed.",
    icon="Globe",
    execution_mode="flow",
    inputs=(
        Port(
            "input",
            required=False,
            description="Optional: the spine value, for expressions in the parameters ($json).",
        ),
    ),
    outputs=(
        Port(
            "response",
            label="Response",
            description="{status, headers, body} for a 2xx "
            "or 3xx answer; body is parsed JSON when the answer is JSON, a file reference "
            "when it is binary and a files root is set, else text.",
        ),
        Port("status", "int", label="Status", description="The status code, whatever it is."),
        Port(
            "error", label="Error", description="{status, headers, body} for a 4xx or 5xx answer."
        ),
    ),
    main_output="response",
    parameters=(
        Parameter("method", "enum", "Method", default="GET", options=METHODS),
        Parameter(
            "url",
            "string",
            "URL",
            required=True,
            hybrid=True,
            socket="string",
            placeholder="https://api.example.com/items",
            description="http:// or https:// only.",
        ),
        Parameter(
            "headers",
            "json",
            "Headers",
            default={},
            description="An object of header names and values. Values never appear in "
            "error messages, so they may hold credentials ({{ $credentials.NAME }}).",
            secret=True,
        ),
        Parameter(
            "query",
            "json",
            "Query",
            default={},
            description="An object of query parameters added to the URL; a list value "
            "repeats the parameter. May hold credentials (an API key parameter).",
            secret=True,
        ),
        Parameter(
            "body",
            "json",
            "Body",
            default=None,
            hybrid=True,
            socket="json",
            description="An object or list is sent as JSON, a string as text (text/plain "
            "unless a Content-Type header says otherwise), a file reference as the file's "
            "bytes; empty sends no body.",
        ),
        Parameter(
            "timeout",
            "number",
            "Timeout (s)",
            default=30,
            minimum=0.1,
            maximum=300,
            description="Seconds the whole request may take, reading the answer included.",
        ),
        Parameter(
            "allow_private_network",
            "boolean",
            "Allow private network",
            default=False,
            description="Allow loopback, private and link-local destinations (localhost, "
            "10.x, 192.168.x, 169.254.169.254). Off, they are refused, after DNS and on "
            "every redirect. NODELOOM_ALLOW_PRIVATE_NETWORK=1 allows them for every node.",
        ),
        Parameter(
            "follow_redirects",
            "boolean",
            "Follow redirects",
            default=True,
            description="Follow up to 5 redirects, checking each destination. Off, a 3xx "
            "answer is returned as it is, on `response`.",
        ),
        Parameter(
            "multipart",
            "boolean",
            "Multipart form",
            default=False,
            description="Send body as multipart/form-data: an object of fields, each text "
            "or a file reference (sent as a file part).",
        ),
    ),
    side_effects="external",
    output_shape={"status": "int", "headers": "object", "body": "json | text | file reference"},
    check=check_request,
)
