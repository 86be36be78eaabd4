"""What nodeloom adds to an agent turn: the same Agno agent, called directly (the floor) and
as an Agent node in a graph, both against the scripted LLM server in its own process."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import nodeloom
from benchmarks.report import Figure, Verdict
from nodeloom.engine.events import CallbackSink
from nodeloom.testing.builders import chain, node

TURN_MS = 5.0
FIRST_TOKEN_MS = 2.0
REPLY = "hello world from the scripted model"
SCRIPT = f'default:\n  reply: "{REPLY}"\n'


class MockServer:
    """`nodeloom mock-llm` in a subprocess, so its work is not timed as ours."""

    def __init__(self) -> None:
        self.folder = tempfile.TemporaryDirectory()
        script = Path(self.folder.name) / "script.yaml"
        script.write_text(SCRIPT)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "nodeloom.cli", "mock-llm", "--script", str(script)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            raise RuntimeError(f"the mock LLM did not start: {self.base_url!r}")

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        self.folder.cleanup()


async def _median_ms(turn: Callable[[], Awaitable[float]], count: int) -> float:
    return statistics.median([await turn() for _ in range(count)])


async def agent_turns(turns: int) -> tuple[list[Figure], list[Verdict]]:
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat

    server = MockServer()
    os.environ.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="benchmark")
    direct = Agent(
        model=OpenAIChat(id="gpt-4o-mini", base_url=server.base_url, api_key="benchmark"),
        telemetry=False,
    )
    flow = nodeloom.load(chain(node("start", "chat-start"), node("agent", "agent", history=False)))
    try:

        async def direct_turn() -> float:
            started = time.perf_counter()
            output = await direct.arun("hi")
            assert output.content == REPLY
            return (time.perf_counter() - started) * 1000

        async def graph_turn() -> float:
            started = time.perf_counter()
            result = await flow.run("hi")
            assert result.outputs["agent"]["output"]["response"] == REPLY, result.error
            return (time.perf_counter() - started) * 1000

        async def direct_first_token() -> float:
            started = time.perf_counter()
            first = None
            async for event in direct.arun("hi", stream=True, stream_events=True):
                if first is None and getattr(event, "event", "") == "RunContent":
                    first = time.perf_counter()
            assert first is not None
            return (first - started) * 1000

        async def graph_first_token() -> float:
            first: list[float] = []

            def on_event(event: nodeloom.Event) -> None:
                if not first and event.event_type == "progress":
                    first.append(time.perf_counter())

            started = time.perf_counter()
            await flow.run("hi", sink=CallbackSink(on_event))
            return (first[0] - started) * 1000

        for warm in (direct_turn, graph_turn, direct_first_token, graph_first_token):
            for _ in range(5):
                await warm()
        direct_ms = await _median_ms(direct_turn, turns)
        graph_ms = await _median_ms(graph_turn, turns)
        direct_first = await _median_ms(direct_first_token, turns)
        graph_first = await _median_ms(graph_first_token, turns)
    finally:
        await flow.aclose()
        if direct.model is not None and getattr(direct.model, "async_client", None):
            await direct.model.async_client.close()
        server.close()
    added_turn, added_first = graph_ms - direct_ms, graph_first - direct_first
    figures = [
        Figure("agent.turn", "agent turn (median)", graph_ms, "ms", direct_ms),
        Figure(
            "agent.turn.added",
            "agent turn: added by nodeloom",
            added_turn,
            "ms",
            ratio_shown=False,
            target=f"≤ {TURN_MS:g} ms",
            passed=added_turn <= TURN_MS,
        ),
        Figure("agent.ttft", "time to first token (median)", graph_first, "ms", direct_first),
        Figure(
            "agent.ttft.added",
            "time to first token: added",
            added_first,
            "ms",
            ratio_shown=False,
            target=f"≤ {FIRST_TOKEN_MS:g} ms",
            passed=added_first <= FIRST_TOKEN_MS,
        ),
    ]
    verdicts = [
        Verdict(
            5,
            added_turn <= TURN_MS,
            f"{added_turn:.2f} ms added to a {direct_ms:.1f} ms turn (medians of {turns})",
        ),
        Verdict(
            6,
            added_first <= FIRST_TOKEN_MS,
            f"{added_first:.2f} ms added to a "
            f"{direct_first:.1f} ms time to first token (medians of {turns})",
        ),
    ]
    return figures, verdicts
