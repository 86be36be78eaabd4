"""The mock LLM served over real HTTP: a Starlette app under uvicorn on a free port.

    POST /v1/chat/completions   answers from the script (JSON, or SSE with `stream: true`)
    GET  /v1/models             the model ids the script names, plus "mock"
    GET  /v1/_requests          what was recorded, as JSON (DELETE clears it)
    GET  /health                {"status": "ok"}

`MockLLM` runs it in the current event loop (`async with MockLLM() as llm`) or in a
thread of its own (`start_in_thread()` / `stop()`, for sync callers and fixtures). It
never installs signal handlers and logs only warnings.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from nodeloom.testing.mock_llm.recording import RecordedRequest, recorder
from nodeloom.testing.mock_llm.request import ChatRequest, InvalidRequest
from nodeloom.testing.mock_llm.responses import chunks, completion, reply_for
from nodeloom.testing.mock_llm.script import Script, ScriptSource, error_body, load_script

_ENDPOINTS = "POST /v1/chat/completions, GET /v1/models, GET /v1/_requests and GET /health"


class _QuietServer(uvicorn.Server):
    """A uvicorn server that leaves signals to its owner (a test, the CLI)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class MockLLM:
    """A scripted, OpenAI-compatible chat model on 127.0.0.1; see docs/testing.md.

        async with MockLLM(script) as llm:       # or: llm = MockLLM().start_in_thread()
            client = AsyncOpenAI(base_url=llm.base_url, api_key="test")
            ...
            llm.requests                          # every RecordedRequest, in order

    `script` is anything `load_script` takes (a file path, a mapping, a list of rules, a
    Script); None is the zero-config echo. `port=0` picks a free port.
    """

    def __init__(
        self,
        script: ScriptSource | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        on_request: Callable[[RecordedRequest], None] | None = None,
    ) -> None:
        self.host = host
        self.on_request = on_request
        self._wanted_port = port
        self._port: int | None = None
        self._script = load_script(script) if script is not None else Script()
        self._lock = threading.Lock()
        self._records: list[RecordedRequest] = []
        self._answered: Counter[int] = Counter()
        self._sequence = 0
        self._server: _QuietServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/v1/_requests", self._recorded, methods=["GET", "DELETE"]),
                Route("/health", self._health, methods=["GET"]),
                Route("/{path:path}", self._not_found, methods=["GET", "POST", "PUT", "DELETE"]),
            ]
        )

    # --- state ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the mock LLM is not running: start it first")
        return self._port

    @property
    def url(self) -> str:
        """The server's root, e.g. http://127.0.0.1:PORT."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as base_url: http://127.0.0.1:PORT/v1."""
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._records)

    @property
    def current_script(self) -> Script:
        return self._script

    def script(self, source: ScriptSource) -> MockLLM:
        """Answer from now on with `source` (anything `load_script` takes); the `times`
        counts start again, the recorded requests stay."""
        script = load_script(source)
        with self._lock:
            self._script = script
            self._answered.clear()
        return self

    def reset(self) -> None:
        """Forget the recorded requests and how often each rule has answered."""
        with self._lock:
            self._records.clear()
            self._answered.clear()

    # --- running ----------------------------------------------------------------------

    async def __aenter__(self) -> MockLLM:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def start(self) -> MockLLM:
        """Serve in the running event loop until `aclose()`."""
        server, sock = self._prepare()
        task = asyncio.create_task(server.serve(sockets=[sock]), name=f"mock-llm:{self._port}")
        self._task = task
        while not server.started:
            if task.done():
                self._forget()
                sock.close()
                task.result()
                raise RuntimeError("the mock LLM server stopped while starting")
            await asyncio.sleep(0.005)
        return self

    async def aclose(self) -> None:
        """Stop serving (the event-loop mode); waits for in-flight responses up to 1 s."""
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        try:
            await self._task
        finally:
            self._forget()

    def start_in_thread(self, timeout: float = 10) -> MockLLM:
        """Serve from a daemon thread with its own event loop until `stop()`."""
        server, sock = self._prepare()
        failures: list[BaseException] = []

        def serve() -> None:
            try:
                asyncio.run(server.serve(sockets=[sock]))
            except BaseException as exc:  # reported by start_in_thread / stop
                failures.append(exc)

        thread = threading.Thread(target=serve, name=f"mock-llm:{self._port}", daemon=True)
        self._thread = thread
        thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                thread.join(timeout)
                self._forget()
                sock.close()
                cause = failures[0] if failures else None
                raise RuntimeError("the mock LLM server did not start") from cause
            time.sleep(0.005)
        return self

    def stop(self, timeout: float = 10) -> None:
        """Stop serving (the thread mode); waits for in-flight responses up to 1 s."""
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout)
        self._forget()

    def _prepare(self) -> tuple[_QuietServer, socket.socket]:
        if self._server is not None:
            raise RuntimeError(f"the mock LLM is already running at {self.base_url}")
        family = socket.getaddrinfo(self.host, self._wanted_port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.create_server((self.host, self._wanted_port), family=family)
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            host=self.host,
            port=self._port,
            http="h11",
            ws="none",
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        self._server = _QuietServer(config)
        return self._server, sock

    def _forget(self) -> None:
        self._server = None
        self._task = None
        self._thread = None
        self._port = None

    # --- endpoints --------------------------------------------------------------------

    async def _chat(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        record = recorder(request, body)
        denied = self._deny(request)
        if denied is not None:
            return self._answer(record(status=401), denied)
        try:
            chat = ChatRequest.from_body(body)
        except InvalidRequest as exc:
            error = error_body(str(exc), "invalid_request_error", param=exc.param)
            return self._answer(record(status=400), JSONResponse(error, status_code=400))
        with self._lock:
            script = self._script
            index = script.choose(chat, self._answered)
            if index is not None:
                self._answered[index] += 1
            self._sequence += 1
            sequence = self._sequence
        action = script.rules[index] if index is not None else script.default
        self._keep(record(rule=index, status=action.error.status if action.error else 200))
        if action.delay and not await _wait_unless_disconnected(request, action.delay):
            return Response(status_code=499)  # nobody is listening any more
        if action.error is not None:
            headers = {}
            if action.error.retry_after is not None:
                headers["retry-after"] = f"{action.error.retry_after:g}"
                headers["retry-after-ms"] = f"{action.error.retry_after * 1000:g}"
            return JSONResponse(action.error.body(), action.error.status, headers=headers)
        reply = reply_for(action, chat, sequence=sequence)
        completion_id, created = f"chatcmpl-mock-{sequence}", int(time.time())
        if not chat.stream:
            body = completion(reply, chat, completion_id=completion_id, created=created)
            return JSONResponse(body)
        events = chunks(reply, chat, completion_id=completion_id, created=created)
        return StreamingResponse(
            _server_sent(events, action.token_delay),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )

    async def _models(self, request: Request) -> Response:
        denied = self._deny(request)
        record = recorder(request, None)(status=401 if denied else 200)
        if denied is not None:
            return self._answer(record, denied)
        data = [
            {"id": model, "object": "model", "created": 0, "owned_by": "nodeloom"}
            for model in self._script.model_ids()
        ]
        return self._answer(record, JSONResponse({"object": "list", "data": data}))

    async def _recorded(self, request: Request) -> Response:
        if request.method == "DELETE":
            self.reset()
            return Response(status_code=204)
        return JSONResponse([r.to_json() for r in self.requests])

    async def _health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def _not_found(self, request: Request) -> Response:
        message = (
            f"the mock LLM has no {request.method} {request.url.path}; it serves {_ENDPOINTS} "
            "(chat completions only: use an OpenAI chat client such as Agno's OpenAIChat, "
            "not the Responses API)"
        )
        error = JSONResponse(error_body(message, "invalid_request_error"), status_code=404)
        return self._answer(recorder(request, None)(status=404), error)

    def _deny(self, request: Request) -> JSONResponse | None:
        wanted = self._script.api_key
        if wanted is None:
            return None
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if given == wanted or request.headers.get("api-key") == wanted:
            return None
        message = "Incorrect API key provided: the mock LLM's script requires its api_key"
        return JSONResponse(
            error_body(message, "invalid_request_error", "invalid_api_key"), status_code=401
        )

    def _answer(self, record: RecordedRequest, response: Response) -> Response:
        self._keep(record)
        return response

    def _keep(self, record: RecordedRequest) -> None:
        with self._lock:
            self._records.append(record)
        if self.on_request is not None:
            self.on_request(record)


async def _wait_unless_disconnected(request: Request, seconds: float) -> bool:
    """Sleep `seconds`; False as soon as the client has gone (so a stop is not held up)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (remaining := deadline - loop.time()) > 0:
        await asyncio.sleep(min(remaining, 0.02))
        if await request.is_disconnected():
            return False
    return True


async def _server_sent(events: list[dict[str, Any]], token_delay: float) -> AsyncIterator[str]:
    for number, event in enumerate(events):
        if number and token_delay:
            await asyncio.sleep(token_delay)
        yield f"data: {json.dumps(event, ensure_ascii=False)}\n\n"
    yield "data: [DONE]\n\n"


__all__ = ["MockLLM", "RecordedRequest"]
