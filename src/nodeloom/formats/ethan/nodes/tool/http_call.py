"""An `http` tool: one request through nodeloom.net's guard (no private, loopback or
link-local destination unless `allow_private_network: true` in the tool's config, or
NODELOOM_ALLOW_PRIVATE_NETWORK=1), every redirect checked, at most 10 MB read.

Request fields (the tool's `config` as defaults, the node's `inputs` over them):
`method` (GET), `url` (required), `params`, `headers`, `json` (a JSON body), `data` (a
form object, or text), `timeout` (seconds per connect/read, 30), `allow_redirects` (true).

The response becomes `{"status", "json" (parsed, or null), "text", "items" (the JSON list,
or its items/results/data), "result" (json, else text), "error"}`; `error` is set for a
status of 400 or more, which fails the node (retried for 408, 429 and 5xx).
"""

from __future__ import annotations

import json as jsonlib
from typing import Any
from urllib.parse import urlencode

import httpx

from nodeloom.errors import NodeError
from nodeloom.formats.ethan.nodes.tool.results import items_of
from nodeloom.formats.ethan.nodes.tool.results import plain as plain_json
from nodeloom.net import Policy, display_url, guarded_stream, read_body

MAX_BYTES = 10 * 1024 * 1024
HOW_TO_ALLOW = (
    "allow_private_network: true in the tool's config, or NODELOOM_ALLOW_PRIVATE_NETWORK=1"
)
FIELDS = ("method", "url", "params", "headers", "json", "data", "timeout", "allow_redirects")


async def request(fields: dict[str, Any], *, allow_private: bool) -> dict[str, Any]:
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise NodeError(
            f"unknown request field(s) {', '.join(unknown)}; fields: {', '.join(FIELDS)}",
            code="invalid_parameter",
            retryable=False,
        )
    url = fields.get("url")
    if not isinstance(url, str) or not url:
        raise NodeError("an http tool needs a `url`", code="invalid_url", retryable=False)
    method = str(fields.get("method") or "GET").upper()
    headers = {str(k): str(v) for k, v in (fields.get("headers") or {}).items()}
    params = {k: v for k, v in (fields.get("params") or {}).items() if v is not None}
    json_body, content = fields.get("json"), None
    data = fields.get("data")
    if isinstance(data, dict):
        content = urlencode(data, doseq=True)
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    elif data is not None:
        content = str(data)
    timeout = float(fields.get("timeout") or 30)
    policy = Policy(allow_private=allow_private, how_to_allow=HOW_TO_ALLOW)
    try:
        async with guarded_stream(
            method,
            url,
            policy=policy,
            headers=headers,
            params=params or None,
            json_body=json_body,
            content=content,
            timeout=timeout,
            follow_redirects=fields.get("allow_redirects", True) is not False,
        ) as response:
            body = await read_body(response, max_bytes=MAX_BYTES)
    except httpx.HTTPError as exc:
        raise NodeError(
            f"{method} {display_url(url)} failed: {type(exc).__name__}: {exc}",
            code="http_error",
            retryable=True,
        ) from None
    return _normalized(response, body)


def _normalized(response: httpx.Response, body: bytes) -> dict[str, Any]:
    text = body.decode(response.charset_encoding or "utf-8", errors="replace")
    try:
        parsed = plain_json(jsonlib.loads(text)) if text.strip() else None
    except ValueError:
        parsed = None
    status = response.status_code
    error = None
    if status >= 400:
        error = {
            "type": "http_status",
            "status": status,
            "message": f"HTTP {status} {response.reason_phrase}".rstrip(),
        }
    return {
        "status": status,
        "json": parsed,
        "text": text,
        "items": items_of(parsed),
        "result": parsed if parsed is not None else text,
        "error": error,
    }


def retryable(status: int) -> bool:
    return status in (408, 429) or status >= 500


__all__ = ["FIELDS", "request", "retryable"]
