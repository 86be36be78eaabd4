"""A chat turn: one recorded run of a saved flow with the user's message, as both chat
endpoints see it (the native `POST /api/flows/{id}/chat` and OpenAI's
`/v1/chat/completions`). A `Turn` is the sink that collects the run's streamed tokens and
flow_step blocks and holds the run's outcome once it has ended; `answer` is what the turn
says back."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable
from typing import Any

from nodeloom.engine.flow import Flow
from nodeloom.engine.result import RunResult
from nodeloom.flow_steps import FlowSteps, registry_lookup, shows_flow_steps
from nodeloom.plugins.contract import Event


class Turn:
    """The sink that collects a run's tokens and flow_step blocks, and the run's outcome
    once it has ended. `show_steps` is the flow's Chat Start `showFlowSteps`."""

    def __init__(self, flow: Flow, chat_id: str) -> None:
        self.flow = flow
        self.chat_id = chat_id
        self.show_steps = shows_flow_steps(flow.graph)
        self.lookup = registry_lookup(flow.graph, flow.registry)
        self.steps = FlowSteps(self.lookup)
        self.run_id = uuid.uuid4().hex
        self.created = int(time.time())
        self.outcome: asyncio.Future[RunResult] = asyncio.get_running_loop().create_future()
        self._tokens: asyncio.Queue[str | None] = asyncio.Queue()
        self.streamed = False

    def emit(self, event: Event) -> None:
        data = event.data or {}
        self.steps.push(event)
        if event.event_type == "progress" and data.get("token"):
            self._tokens.put_nowait(str(data["token"]))

    async def run(self, start: Awaitable[RunResult]) -> RunResult:
        """Await the run and keep its outcome (or its error) for `outcome`'s waiters."""
        try:
            result = await start
        except asyncio.CancelledError:
            self.outcome.cancel()
            raise
        except BaseException as exc:
            if not self.outcome.done():
                self.outcome.set_exception(exc)
                self.outcome.exception()  # the launch reports it: no "never retrieved"
            raise
        finally:
            self._tokens.put_nowait(None)
        if not self.outcome.done():  # a caller that went away cancels its wait
            self.outcome.set_result(result)
        return result

    async def next_token(self) -> str | None:
        """The next streamed token; None once the run has ended."""
        token = await self._tokens.get()
        if token is not None:
            self.streamed = True
        return token

    def step_blocks(self) -> list[dict[str, Any]]:
        """The turn's flow_step blocks (none when Chat Start's showFlowSteps is off)."""
        return [dict(block) for block in self.steps.blocks] if self.show_steps else []


def answer(flow: Flow, result: RunResult) -> str:
    """The run's result if a node set one, else the main outputs of the end nodes that
    ran: a string as is, an object with a string `text`, `response` or `message` (an LLM
    Completion's or an Agent's output) as that string, anything else as JSON text; several
    joined by blank lines."""
    if result.result is not None:
        return _text(result.result)
    parts = []
    for index in flow.plan.sinks:
        node = flow.plan.nodes[index]
        ports = result.outputs.get(node.name, {})
        if node.main_port in ports:
            parts.append(_text(ports[node.main_port]))
    return "\n\n".join(parts)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("text", "response", "message"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return json.dumps(value, ensure_ascii=False, default=str)
