"""The built-in toolsets: what each name in a Toolset's `toolsets` turns into.

    calculator   Agno's CalculatorTools (add, subtract, multiply, divide, exponentiate,
                 factorial, is_prime, square_root), with factorial and is_prime bounded
    datetime     current_datetime(timezone="UTC")
    http_fetch   http_fetch(url, method="GET"), through nodeloom.net's guard

Every tool answers the model with text; a failure is text too (the model can read it and
try something else), never an exception.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import httpx
from agno.tools import Toolkit
from agno.tools.calculator import CalculatorTools

from nodeloom.errors import NodeError
from nodeloom.net import Policy, display_url, guarded_stream

MAX_FACTORIAL = 1000  # 2,568 digits; the model picks n, and n = 10**7 takes minutes
MAX_PRIME_CHECK = 10**12  # trial division up to 10**6

FETCH_METHODS = ("GET", "HEAD")
FETCH_TIMEOUT = 20.0
MAX_FETCH_BYTES = 1024 * 1024
MAX_FETCH_CHARS = 20_000
HOW_TO_ALLOW = "allow_private_network: true on the Toolset or NODELOOM_ALLOW_PRIVATE_NETWORK=1"
_TEXT_TYPES = ("json", "xml", "javascript", "x-www-form-urlencoded", "yaml", "csv")


class Calculator(CalculatorTools):
    """Agno's calculator. The model chooses the numbers, so the two functions whose cost
    grows without bound refuse numbers past a limit instead of holding a CPU for minutes."""

    def factorial(self, n: int) -> str:
        """Calculate the factorial of a number and return the result.

        Args:
            n (int): Number to calculate the factorial of (at most 1000).

        Returns:
            str: JSON string of the result.
        """
        if n > MAX_FACTORIAL:
            return json.dumps(
                {"operation": "factorial", "error": f"n must be at most {MAX_FACTORIAL}"}
            )
        return super().factorial(n)

    def is_prime(self, n: int) -> str:
        """Check if a number is prime and return the result.

        Args:
            n (int): Number to check if prime (at most 10**12).

        Returns:
            str: JSON string of the result.
        """
        if n > MAX_PRIME_CHECK:
            return json.dumps(
                {"operation": "prime_check", "error": f"n must be at most {MAX_PRIME_CHECK}"}
            )
        return super().is_prime(n)


def current_datetime(timezone: str = "UTC") -> str:
    """The current date and time, in ISO 8601 (e.g. 2025-03-14T09:26:53+01:00).

    Args:
        timezone: An IANA time zone name such as "UTC", "Europe/Paris" or
            "America/New_York". Default: UTC.
    """
    try:
        zone = ZoneInfo(timezone.strip() or "UTC")
    except (ZoneInfoNotFoundError, ValueError, AttributeError):
        return (
            f"Unknown time zone {timezone!r}: use an IANA time zone name such as 'UTC', "
            "'Europe/Paris' or 'America/New_York'."
        )
    return datetime.now(zone).isoformat(timespec="seconds")


def make_http_fetch(*, allow_private: bool) -> Callable[..., Awaitable[str]]:
    """An `http_fetch` tool bound to a network policy (the node's `allow_private_network`)."""
    policy = Policy(allow_private=allow_private, how_to_allow=HOW_TO_ALLOW)

    async def http_fetch(url: str, method: str = "GET") -> str:
        """Fetch a web page or HTTP API and return the status, content type and body as text.

        Only http:// and https:// URLs; the body is cut after 20,000 characters, and
        binary bodies (images, archives) are not shown.

        Args:
            url: The http:// or https:// URL to fetch.
            method: "GET" (the default) or "HEAD" (status and headers only).
        """
        return await fetch(url, method, policy=policy)

    return http_fetch


async def fetch(
    url: str,
    method: str = "GET",
    *,
    policy: Policy,
    timeout: float = FETCH_TIMEOUT,
    max_bytes: int = MAX_FETCH_BYTES,
    max_chars: int = MAX_FETCH_CHARS,
) -> str:
    """What `http_fetch` answers: the response as text, or why there is none."""
    verb = method.strip().upper() if isinstance(method, str) else ""
    if verb not in FETCH_METHODS:
        return f"http_fetch: method {method!r} is not supported; use GET or HEAD."
    if not isinstance(url, str):
        return "http_fetch: url must be text, such as 'https://example.com/page'."
    url = url.strip()
    shown = display_url(url)
    try:
        async with (
            asyncio.timeout(timeout),
            guarded_stream(verb, url, policy=policy, timeout=timeout) as response,
        ):
            body, complete = await _read_some(response, max_bytes)
    except NodeError as exc:  # refused destination, not an http(s) URL, redirect loop
        return f"http_fetch could not fetch {shown}: {exc}"
    except TimeoutError:
        return f"http_fetch: {shown} did not answer within {timeout:g} seconds."
    except httpx.HTTPError as exc:
        cause = str(exc) or type(exc).__name__
        return f"http_fetch could not fetch {shown}: {cause}"
    return _describe(url, response, body, complete, max_bytes, max_chars)


async def _read_some(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """At most `max_bytes` of the body, and whether that is all of it."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], False
    return b"".join(chunks), True


def _describe(
    url: str,
    response: httpx.Response,
    body: bytes,
    complete: bool,
    max_bytes: int,
    max_chars: int,
) -> str:
    lines = [f"HTTP {response.status_code} {response.reason_phrase}".rstrip()]
    if display_url(response.url) != display_url(url):  # redirected: say where it ended
        lines.append(f"URL: {display_url(response.url)}")
    content_type = response.headers.get("content-type", "")
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    if response.request.method == "HEAD":
        length = response.headers.get("content-length")
        if length:
            lines.append(f"Content-Length: {length}")
        return "\n".join(lines)
    if not body:
        return "\n".join([*lines, "", "(empty body)"])
    if not _is_text(content_type):
        more = "" if complete else " or more"
        return "\n".join([*lines, "", f"(binary content, {len(body)} bytes{more}, not shown)"])
    text = body.decode(_charset(response), errors="replace")
    notes = []
    if len(text) > max_chars:
        notes.append(f"[truncated: the first {max_chars} of {len(text)} characters]")
        text = text[:max_chars]
    elif not complete:
        notes.append(f"[truncated: the body is longer than {max_bytes} bytes]")
    return "\n".join([*lines, "", text, *notes])


def _is_text(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return not kind or kind.startswith("text/") or any(word in kind for word in _TEXT_TYPES)


def _charset(response: httpx.Response) -> str:
    charset = response.charset_encoding or "utf-8"
    try:
        "".encode(charset)
    except LookupError:
        return "utf-8"
    return charset


def build_toolset(name: str, data: Mapping[str, Any]) -> tuple[list[Any], list[str]]:
    """The Agno tools (toolkits or functions) of the built-in toolset `name`, and the
    names of the tools the model sees."""
    tools: list[Any]
    if name == "calculator":
        tools = [Calculator()]
    elif name == "datetime":
        tools = [current_datetime]
    elif name == "http_fetch":
        tools = [make_http_fetch(allow_private=bool(data.get("allow_private_network")))]
    else:
        raise KeyError(name)
    names = [
        tool_name
        for tool in tools
        for tool_name in (list(tool.functions) if isinstance(tool, Toolkit) else [tool.__name__])
    ]
    return tools, names


__all__ = [
    "Calculator",
    "build_toolset",
    "current_datetime",
    "fetch",
    "make_http_fetch",
]
