"""HTTP Request: send the request through `nodeloom.net` and route the answer by status.

The guard (`nodeloom.net`) refuses private destinations after DNS and on every redirect,
and pins each connection to the checked address. This module turns the node's parameters
into a request, reads at most MAX_RESPONSE_BYTES of the answer, and shapes the outputs.
Header values are credentials more often than not: no message here ever shows one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from nodeloom.errors import NodeError
from nodeloom.net import Policy, Resolver, display_url, guarded_stream, read_body
from nodeloom.nodes.integration.http_request.binary import (
    MAX_DOWNLOAD_BYTES,
    download,
    file_body,
    keeps_as_file,
    multipart_body,
)
from nodeloom.plugins.contract import BinaryStore, DataValue, ExecutionResult, FlowContext
from nodeloom.values import kind_of

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
DEFAULT_TIMEOUT = 30.0
MIN_TIMEOUT, MAX_TIMEOUT = 0.1, 300.0
# `timeout` is also the engine's per-node timeout (a common setting): the request gets a
# little less, so that the node reports its own, clearer, timeout first.
TIMEOUT_MARGIN = 0.1
MAX_REDIRECTS = 5
MAX_RESPONSE_BYTES = 10 * 1024 * 1024
HOW_TO_ALLOW = "allow_private_network: true on the node or NODELOOM_ALLOW_PRIVATE_NETWORK=1"

_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # a valid header name (RFC 9110)
_SCALARS = (str, int, float, bool)


@dataclass(frozen=True)
class _Request:
    """The node's parameters, checked: what will be sent."""

    method: str
    url: str
    headers: dict[str, str | bytes]
    query: dict[str, Any]
    content: bytes | None
    timeout: float
    allow_private: bool
    follow_redirects: bool

    @property
    def shown(self) -> str:
        return f"{self.method} {display_url(self.url)}"


class HttpRequestExecutor:
    """`resolver` and `transport` replace DNS and the network (see `nodeloom.net`);
    the catalogue's executor uses the real ones."""

    node_type = "http-request"

    @staticmethod
    def summarize(parameters: Mapping[str, Any], outputs: Mapping[str, Any]) -> str | None:
        """The flow_step summary: `GET host → 200` (the host of an inline URL; a URL made
        by an expression shows as `…`)."""
        method = str(parameters.get("method") or "GET").upper()
        url = parameters.get("url")
        host = "…"
        head = url.split("{{", 1)[0] if isinstance(url, str) else ""
        if head and (head == url or head.count("/") >= 3):  # the host is not templated
            with contextlib.suppress(httpx.InvalidURL):
                host = httpx.URL(head).host or "…"
        return f"{method} {host} → {outputs.get('status', '?')}"

    def __init__(
        self,
        *,
        resolver: Resolver | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        max_download_bytes: int = MAX_DOWNLOAD_BYTES,
    ) -> None:
        self.resolver = resolver
        self.transport = transport
        self.max_response_bytes = max_response_bytes
        self.max_download_bytes = max_download_bytes

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        blobs = context.services.blobs
        request = await asyncio.to_thread(_read_parameters, data, blobs)
        status, answer = await self._send(request, blobs)
        outputs: dict[str, Any] = {"status": status}
        outputs["error" if status >= 400 else "response"] = answer
        return ExecutionResult(outputs=outputs)

    async def _send(
        self, request: _Request, blobs: BinaryStore | None = None
    ) -> tuple[int, dict[str, Any]]:
        policy = Policy(allow_private=request.allow_private, how_to_allow=HOW_TO_ALLOW)
        budget = request.timeout - min(TIMEOUT_MARGIN, request.timeout / 20)
        try:
            async with asyncio.timeout(budget):
                async with guarded_stream(
                    request.method,
                    request.url,
                    policy=policy,
                    headers=request.headers,
                    params=request.query,
                    content=request.content,
                    timeout=budget,
                    follow_redirects=request.follow_redirects,
                    max_redirects=MAX_REDIRECTS,
                    resolver=self.resolver,
                    transport=self.transport,
                ) as response:
                    if keeps_as_file(response, blobs):
                        kept = await download(
                            response, max_bytes=self.max_download_bytes, blobs=blobs
                        )
                        return response.status_code, _answer(response, kept)
                    body = await read_body(response, max_bytes=self.max_response_bytes)
                    return response.status_code, _answer(response, _parse_body(response, body))
        except (TimeoutError, httpx.TimeoutException):
            raise _http_error(
                request,
                f"no complete answer within {request.timeout:g} s",
                "The server may be slow or unreachable; raise `timeout` (at most 300 s) or "
                "try again later.",
            ) from None
        except httpx.HTTPError as exc:
            raise _http_error(request, _cause(exc), _hint(exc)) from exc


def _answer(response: httpx.Response, body: Any) -> dict[str, Any]:
    return {
        "status": response.status_code,
        "headers": {name.lower(): value for name, value in response.headers.items()},
        "body": body,
    }


def _parse_body(response: httpx.Response, body: bytes) -> Any:
    """Parsed JSON when the answer says it is JSON (and is), else the text."""
    charset = response.charset_encoding or "utf-8"
    try:
        text = body.decode(charset, errors="replace")
    except LookupError:  # an unknown charset name
        text = body.decode("utf-8", errors="replace")
    media_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type in ("application/json", "text/json") or media_type.endswith("+json"):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _cause(exc: httpx.HTTPError) -> str:
    """What went wrong, from httpx's message only when it comes from the network (a local
    protocol error may quote the request, header values included)."""
    if isinstance(exc, (httpx.NetworkError, httpx.RemoteProtocolError)):
        return str(exc) or type(exc).__name__
    return type(exc).__name__


def _hint(exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.ConnectError):
        return "Check the host name and port, and that the server is up and reachable."
    return "Try again; if it keeps failing, check the server."


def _http_error(request: _Request, cause: str, hint: str) -> NodeError:
    return NodeError(
        f"{request.shown} failed: {cause}. {hint}",
        code="http_error",
        retryable=True,
        details={"method": request.method, "url": display_url(request.url)},
    )


# --- parameters ----------------------------------------------------------------------


def _invalid(field: str, message: str) -> NodeError:
    return NodeError(message, code="invalid_parameter", retryable=False, details={"field": field})


def _read_parameters(data: Mapping[str, Any], blobs: BinaryStore | None = None) -> _Request:
    method = data.get("method") or "GET"
    if not isinstance(method, str) or method.upper() not in METHODS:
        shown = method if isinstance(method, str) else type(method).__name__
        raise _invalid("method", f"method must be one of {', '.join(METHODS)}; got {shown!r}")
    url = data.get("url")
    if not isinstance(url, str) or not url.strip():
        raise _invalid(
            "url",
            "url is required: an http:// or https:// address such as https://api.example.com/items",
        )
    headers = _read_headers(data.get("headers"))
    if _read_flag(data, "multipart", default=False):
        content, content_type = multipart_body(data.get("body"), MAX_RESPONSE_BYTES, blobs)
    else:
        content, content_type = _read_body(data.get("body"), blobs)
    if content_type and not any(name.lower() == "content-type" for name in headers):
        headers["Content-Type"] = content_type
    return _Request(
        method=method.upper(),
        url=url.strip(),
        headers=headers,
        query=_read_query(data.get("query")),
        content=content,
        timeout=_read_timeout(data.get("timeout")),
        allow_private=_read_flag(data, "allow_private_network", default=False),
        follow_redirects=_read_flag(data, "follow_redirects", default=True),
    )


def _read_headers(value: Any) -> dict[str, str | bytes]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _invalid(
            "headers",
            f'headers must be an object such as {{"Accept": "application/json"}}; got '
            f"{kind_of(value)}",
        )
    headers: dict[str, str | bytes] = {}
    for name, raw in value.items():
        if not isinstance(name, str) or not _TOKEN.match(name):
            raise _invalid(
                "headers", f"header name {name!r} is not valid: use letters, digits and -"
            )
        if raw is None:
            continue
        if isinstance(raw, bool):
            raw = "true" if raw else "false"
        elif isinstance(raw, (int, float)):
            raw = str(raw)
        if not isinstance(raw, str):  # the value itself is never shown: it may be secret
            raise _invalid("headers", f"header {name!r} must have a text value, not {kind_of(raw)}")
        if any(char in raw for char in "\r\n\0"):
            raise _invalid(
                "headers",
                f"header {name!r} has a line break or NUL in its value; remove it "
                "(a value pasted with its trailing newline is the usual cause)",
            )
        headers[name] = raw if raw.isascii() else raw.encode("utf-8")
    return headers


def _read_query(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _invalid(
            "query", f'query must be an object such as {{"page": 2}}; got {kind_of(value)}'
        )
    for key, item in value.items():
        items = item if isinstance(item, list) else [item]
        if not all(part is None or isinstance(part, _SCALARS) for part in items):
            raise _invalid(
                "query",
                f"query parameter {key!r} must be text, a number, a boolean or a list of those",
            )
    return {str(key): item for key, item in value.items()}


def _read_body(value: Any, blobs: BinaryStore | None) -> tuple[bytes | None, str | None]:
    """The body as bytes and its default Content-Type: text as text, a file reference as
    the file's bytes, the rest as JSON."""
    if value is None or value == "":
        return None, None
    sent = file_body(value, MAX_RESPONSE_BYTES, blobs)
    if sent is not None:
        return sent
    if isinstance(value, str):
        return value.encode("utf-8"), "text/plain; charset=utf-8"
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _invalid("body", f"body cannot be sent as JSON: {exc}") from None
    return text.encode("utf-8"), "application/json"


def _read_timeout(value: Any) -> float:
    if value is None:
        return DEFAULT_TIMEOUT
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _invalid("timeout", f"timeout is a number of seconds; got {kind_of(value)}")
    if not MIN_TIMEOUT <= value <= MAX_TIMEOUT:
        raise _invalid(
            "timeout",
            f"timeout must be between {MIN_TIMEOUT:g} and {MAX_TIMEOUT:g} seconds; got {value:g}",
        )
    return float(value)


def _read_flag(data: Mapping[str, Any], field: str, *, default: bool) -> bool:
    value = data.get(field)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _invalid(field, f"{field} must be true or false; got {kind_of(value)}")
    return value


executor = HttpRequestExecutor()
