"""Ethan YAML graphs written into tmp_path and run on the real engine.

`ethan.write(text)` writes a YAML file (dedented) and returns its path; `ethan.load(text)`
converts and validates it; `await ethan.run(text, inputs={...})` runs it once and returns
(RunResult, events). LLM nodes use the `mock_llm` fixture's server (OPENAI_BASE_URL).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

import nodeloom
from nodeloom.engine.context import RunSettings
from nodeloom.engine.events import ListSink


class Ethan:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def write(self, text: str, name: str = "agent.yaml") -> Path:
        path = self.folder / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def load(self, text: str, **options: Any) -> nodeloom.Flow:
        from nodeloom.formats import FormatOptions

        path = self.write(text)
        return nodeloom.load(path, options=FormatOptions(base_dir=self.folder, **options))

    async def run(
        self,
        text: str,
        inputs: dict[str, Any] | None = None,
        *,
        settings: RunSettings | None = None,
        **options: Any,
    ) -> tuple[nodeloom.RunResult, list[nodeloom.Event]]:
        flow = self.load(text, **options)
        sink = ListSink()
        async with flow:
            result = await flow.run(
                trigger={"inputs": inputs} if inputs is not None else None,
                sink=sink,
                settings=settings,
            )
        return result, sink.events


@pytest.fixture
def ethan(tmp_path: Path) -> Ethan:
    return Ethan(tmp_path)
