"""Fixtures for recorded runs: the `mark` fixture node (./pack) and a RunService on the
`store` fixture (SQLite and Postgres, from nodeloom.testing.stores)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nodeloom.plugins.registry import Registry
from nodeloom.runs import RunService
from nodeloom.store import Store

PACK = Path(__file__).parent / "pack"
CONFORMANCE_PACK = Path(__file__).parent.parent / "conformance" / "pack"


@pytest.fixture(scope="session")
def registry() -> Registry:
    found = Registry.discover(
        paths=[str(PACK), str(CONFORMANCE_PACK)], use_entry_points=False, use_environment=False
    )
    assert not found.failures, found.failures
    return found


@pytest.fixture
async def service(store: Store, registry: Registry) -> AsyncIterator[RunService]:
    runs = RunService(store, registry)
    try:
        yield runs
    finally:
        await runs.aclose()
