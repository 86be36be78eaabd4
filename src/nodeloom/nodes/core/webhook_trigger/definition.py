"""Webhook Trigger: where an HTTP request to `POST /api/hooks/{path}` enters the graph."""

import re
from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

PATH_PATTERN = re.compile(r"[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*")
DEFAULT_SECRET_HEADER = "X-Nodeloom-Secret"
HEADER_PATTERN = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")


def check_webhook(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The path must be a plain URL path; the secret header a valid header name."""
    issues: list[tuple[str, str]] = []
    path = data.get("path")
    if isinstance(path, str) and not PATH_PATTERN.fullmatch(path):
        issues.append(
            (
                "path",
                f"path {path!r} is not a webhook path: use letters, digits, '-', '_' and "
                "'/' between segments, without a leading or trailing '/', e.g. orders/new",
            )
        )
    header = data.get("secret_header", DEFAULT_SECRET_HEADER)
    if isinstance(header, str) and not HEADER_PATTERN.fullmatch(header):
        issues.append(
            (
                "secret_header",
                f"secret_header {header!r} is not an HTTP header name, "
                f"e.g. {DEFAULT_SECRET_HEADER}",
            )
        )
    return issues


definition = NodeDefinition(
    id="webhook-trigger",
    name="Webhook Trigger",
    category="trigger",
    description="Where an HTTP request enters the graph: a saved flow with this node answers "
    "POST /api/hooks/{path} when the request carries the secret. Outputs "
    '{"body", "headers", "query"} of the request.',
    icon="Webhook",
    execution_mode="flow",
    inputs=(),
    outputs=(
        Port(
            "output",
            description='{"body": <JSON or text>, "headers": {...}, "query": {...}}; '
            "the secret header is left out.",
        ),
    ),
    parameters=(
        Parameter(
            "path",
            "string",
            "Path",
            required=True,
            placeholder="orders/new",
            description="The URL path after /api/hooks/: letters, digits, '-', '_' and '/'.",
        ),
        Parameter(
            "secret_header",
            "string",
            "Secret header",
            default=DEFAULT_SECRET_HEADER,
            description="The request header that must carry the secret.",
        ),
        Parameter(
            "secret",
            "string",
            "Secret",
            required=True,
            description="The value callers send in the secret header (compared in constant "
            "time). A request without it is refused with 401 and starts no run.",
            secret=True,
        ),
        Parameter(
            "mode",
            "enum",
            "Mode",
            default="sync",
            options=("sync", "async"),
            description="sync: answer with the run's result once it ends; async: answer 202 "
            "with the run id at once.",
        ),
        Parameter(
            "timeout",
            "number",
            "Timeout (s)",
            default=30,
            minimum=0.1,
            maximum=3600,
            description="sync mode: seconds to wait for the run before answering 504 (the "
            "run goes on).",
        ),
    ),
    trigger=True,
    output_shape={"body": "json | text", "headers": "object", "query": "object"},
    check=check_webhook,
)
