"""The semantics suite: one rule per test, named as the rule. Uses the tiny fixture
plugin pack in ./pack (const, sleep, flaky, fail, route, number, side-echo, announce) beside the
built-in catalogue."""

from pathlib import Path
from typing import Any

import pytest

import nodeloom
from nodeloom import ListSink, RunSettings
from nodeloom.plugins.registry import Registry

PACK = Path(__file__).parent / "pack"


@pytest.fixture(scope="session")
def registry() -> Registry:
    found = Registry.discover(paths=[str(PACK)], use_entry_points=False, use_environment=False)
    assert not found.failures, found.failures
    return found


class Runner:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def load(self, document: dict[str, Any]) -> nodeloom.Flow:
        return nodeloom.load(document, registry=self.registry)

    async def __call__(self, document: dict[str, Any], message: Any = None, **options: Any):
        sink = ListSink()
        settings = options.pop("settings", None) or RunSettings(
            **{
                k: options.pop(k)
                for k in ("max_concurrency", "max_steps", "timeout")
                if k in options
            }
        )
        result = await self.load(document).run(message, sink=sink, settings=settings, **options)
        return result, sink.events


@pytest.fixture
def run(registry: Registry) -> Runner:
    return Runner(registry)
