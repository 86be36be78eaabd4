"""Running a flow test: each case in a fresh data directory, against the mock LLM (its
script, or zero-config), never a real provider."""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nodeloom.engine.events import ListSink
from nodeloom.engine.flow import load
from nodeloom.errors import GraphError
from nodeloom.testing.flowtest.checks import check
from nodeloom.testing.flowtest.model import Case, FlowTestFile
from nodeloom.testing.mock_llm import MockLLM, ScriptError, load_script


@dataclass
class CaseResult:
    """How one test went. `error` is set when the test could not run at all (an invalid
    flow, mock script or trigger); `problems` lists the expectations the run failed."""

    name: str
    problems: list[str] = field(default_factory=list)
    error: str | None = None
    duration: float = 0.0
    run_id: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and not self.problems

    def report(self) -> str:
        return self.error if self.error is not None else "\n".join(self.problems)


async def run_file(test_file: FlowTestFile, select: str | None = None) -> list[CaseResult]:
    """Every case of the file (or those whose name contains `select`), one after another."""
    return [
        await run_case(test_file, case)
        for case in test_file.tests
        if select is None or select.lower() in case.name.lower()
    ]


async def run_case(test_file: FlowTestFile, case: Case) -> CaseResult:
    began = time.perf_counter()
    outcome = CaseResult(case.name)
    try:
        source = test_file.script_for(case)
        script = load_script(source) if source is not None else None
    except ScriptError as exc:
        outcome.error = str(exc)
        return outcome
    cassette = test_file.cassette_for(case)
    with tempfile.TemporaryDirectory(prefix="nodeloom-flowtest-") as data_dir:
        if cassette is not None:
            await _replay(test_file, case, outcome, cassette, data_dir)
        else:
            async with MockLLM(script) as llm:
                environment = {
                    "NODELOOM_DATA_DIR": data_dir,
                    "OPENAI_BASE_URL": llm.base_url,
                    "OPENAI_API_KEY": "mock-llm",
                }
                with _environment(environment):
                    await _run(test_file, case, outcome)
    outcome.duration = time.perf_counter() - began
    return outcome


async def _replay(
    test_file: FlowTestFile, case: Case, outcome: CaseResult, cassette: Path, data_dir: str
) -> None:
    """The case's HTTP requests served from a cassette (no mock LLM, no network); the
    provider settings stay as the environment has them, as when it was recorded."""
    from nodeloom.cassettes import CassetteError, replaying

    environment = {"NODELOOM_DATA_DIR": data_dir}
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        environment[name] = os.environ.get(name) or "cassette-replay"
    try:
        with replaying(cassette) as player, _environment(environment):
            await _run(test_file, case, outcome)
    except CassetteError as exc:
        outcome.error = str(exc)
        return
    if player.misses:
        outcome.problems.insert(
            0,
            f"cassette: {len(player.misses)} request(s) not recorded: " + "; ".join(player.misses),
        )


async def _run(test_file: FlowTestFile, case: Case, outcome: CaseResult) -> None:
    try:
        flow = load(test_file.flow_path)
    except GraphError as exc:
        outcome.error = f"the flow {test_file.flow} does not load:\n{exc}"
        return
    trigger: dict[str, Any] = dict(case.trigger or {})
    if case.inputs is not None:
        trigger["inputs"] = case.inputs
    settings = dataclasses.replace(flow.default_settings(), timeout=case.timeout)
    sink = ListSink()
    async with flow:
        try:
            result = await flow.run(
                case.input,
                trigger=trigger or None,
                sink=sink,
                settings=settings,
                answers=case.answers or None,
            )
        except GraphError as exc:
            outcome.error = f"the run did not start:\n{exc}"
            return
    outcome.run_id = result.run_id
    outcome.problems = check(case.expect, result, sink.events, flow.graph)


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
