"""Recording and replaying every HTTP request made through httpx in this process: model
calls (the OpenAI, Anthropic and Ollama clients), HTTP Request nodes, and MCP servers over
HTTP (the MCP SDK's client is httpx2, a fork of httpx: patched the same way).

    with recording("run.cassette.json"):   # the real network; each exchange is kept
        ...                                # and written when the block ends
    with replaying("run.cassette.json") as player:
        ...                                # no network: each request gets the response
                                           # recorded for it; player.misses lists the rest

The seam is httpx's network transport (`httpx.AsyncHTTPTransport`, and httpx2's), patched
for the block: every client that goes to the network goes through it, whoever built the
client. One block at a time per process.

A GET asking for `text/event-stream` (an MCP session's stream for server-initiated
messages) stays open as long as the session: it is not recorded, and a replay answers it
405, which the MCP spec lets a server answer when it offers no such stream.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from nodeloom.cassettes.format import (
    CassetteError,
    interaction,
    public_url,
    read,
    request_key,
    response_of,
    write,
)


def _libraries() -> list[Any]:
    """httpx, and httpx2 when it is installed (the MCP SDK's client)."""
    found: list[Any] = [httpx]
    try:
        import httpx2
    except ImportError:
        return found
    return [*found, httpx2]


_REALS = {lib: lib.AsyncHTTPTransport.handle_async_request for lib in _libraries()}
# True while a cassette replays: the network guard then skips DNS (nothing leaves the
# process, and an offline machine cannot resolve the recorded hosts).
REPLAYING = False
MISS_STATUS = 404  # an unrecorded request, during replay (not retried by model clients)


class Recorder:
    def __init__(self) -> None:
        self.interactions: list[dict[str, Any]] = []

    async def handle(self, transport: Any, request: Any, lib: Any) -> Any:
        if _event_stream(request):
            return await _REALS[lib](transport, request)  # live, not recorded
        body = await request.aread()
        response = await _REALS[lib](transport, request)
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        recorded = lib.Response(
            response.status_code,
            headers=[(k, v) for k, v in response.headers.items() if k.lower() not in _ENCODED],
            content=content,
            request=request,
            extensions={"http_version": response.extensions.get("http_version", b"HTTP/1.1")},
        )
        self.interactions.append(interaction(request, body, recorded))
        return recorded


_ENCODED = {"content-encoding", "content-length", "transfer-encoding"}


class Player:
    """Serves recorded responses: each is used once, in the order recorded, for a request
    with the same method, URL and body."""

    def __init__(self, interactions: list[dict[str, Any]], path: Path) -> None:
        self.path = path
        self.queues: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        for item in interactions:
            self.queues[item["request"]["key"]].append(item)
        self.misses: list[str] = []

    async def handle(self, transport: Any, request: Any, lib: Any) -> Any:
        if _event_stream(request):
            return lib.Response(405, request=request)
        body = await request.aread()
        queue = self.queues.get(request_key(request, body))
        if queue:
            return response_of(queue.popleft(), request, lib)
        described = f"{request.method} {public_url(request)}"
        self.misses.append(described)
        unused = sum(
            len(q)
            for key, q in self.queues.items()
            if key.startswith(f"{request.method} {public_url(request)} ")
        )
        message = (
            f"the cassette {self.path} has no recorded response for {described}"
            + (
                f" with this body ({unused} unused recorded ones to this URL have other bodies)"
                if unused
                else ""
            )
            + "; record it again with `nodeloom run --record`"
        )
        error = {"error": {"message": message, "type": "cassette_miss", "code": "cassette_miss"}}
        headers = {"x-nodeloom-cassette": "miss"}
        return lib.Response(MISS_STATUS, json=error, headers=headers, request=request)

    @property
    def unused(self) -> int:
        return sum(len(q) for q in self.queues.values())


def _event_stream(request: Any) -> bool:
    return bool(
        request.method == "GET" and "text/event-stream" in request.headers.get("accept", "")
    )


@contextmanager
def _patched(handler: Any) -> Iterator[None]:
    if any(lib.AsyncHTTPTransport.handle_async_request is not real for lib, real in _REALS.items()):
        raise CassetteError("a cassette is already recording or replaying in this process")

    def patch(lib: Any) -> Any:
        async def handle_async_request(self: Any, request: Any) -> Any:
            return await handler.handle(self, request, lib)

        return handle_async_request

    for lib in _REALS:
        lib.AsyncHTTPTransport.handle_async_request = patch(lib)
    try:
        yield
    finally:
        for lib, real in _REALS.items():
            lib.AsyncHTTPTransport.handle_async_request = real


@contextmanager
def recording(path: str | Path) -> Iterator[Recorder]:
    """Record every HTTP exchange of the block; the cassette is written when it ends
    (also after an error, so a failing run can be replayed)."""
    recorder = Recorder()
    try:
        with _patched(recorder):
            yield recorder
    finally:
        write(Path(path), recorder.interactions)


@contextmanager
def replaying(path: str | Path) -> Iterator[Player]:
    """Serve the block's HTTP requests from the cassette, never the network. A request
    it has no response for is answered with status 404 and a JSON error naming it, and
    listed in `player.misses`."""
    global REPLAYING
    player = Player(read(Path(path)), Path(path))
    with _patched(player):
        REPLAYING = True
        try:
            yield player
        finally:
            REPLAYING = False


def describe(path: str | Path) -> str:
    """One line per recorded request (for `--replay` reports and debugging)."""
    return "\n".join(
        f"{i['request']['method']} {i['request']['url']} -> {i['response']['status']}"
        for i in read(Path(path))
    )


__all__ = ["CassetteError", "Player", "Recorder", "describe", "recording", "replaying"]
