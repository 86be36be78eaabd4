"""Flow test files (`*.flowtest.yaml`) as pytest items, one per test in the file.

Installed with nodeloom, it registers itself (the `pytest11` entry point); in a checkout,
add it to the root conftest.py:

    pytest_plugins = ["nodeloom.testing.flowtest.pytest_plugin"]
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nodeloom.testing.flowtest.model import (
    SUFFIX,
    Case,
    FlowTestError,
    FlowTestFile,
    load_flowtest,
)
from nodeloom.testing.flowtest.runner import run_case


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name.endswith(SUFFIX):
        collector: pytest.Collector = FlowTestCollector.from_parent(parent, path=file_path)
        return collector
    return None


class FlowTestFailed(Exception):
    """A flow test's expectations failed, or it could not run."""


class FlowTestCollector(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        try:
            test_file = load_flowtest(self.path)
        except FlowTestError as exc:
            raise self.CollectError(str(exc)) from None
        for case in test_file.tests:
            yield FlowTestItem.from_parent(self, name=case.name, test_file=test_file, case=case)


class FlowTestItem(pytest.Item):
    def __init__(self, *, test_file: FlowTestFile, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.test_file = test_file
        self.case = case

    def runtest(self) -> None:
        result = asyncio.run(run_case(self.test_file, self.case))
        if not result.passed:
            raise FlowTestFailed(result.report())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, FlowTestFailed):
            return f"{self.case.name}\n{excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"flow test: {self.case.name}"
