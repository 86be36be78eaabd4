"""Flow tests: `*.flowtest.yaml` files that run a flow offline and check what it did.
`nodeloom test` runs them; the pytest plugin (`nodeloom.testing.flowtest.pytest_plugin`)
collects them as pytest items. See docs/testing.md#flow-tests."""

from nodeloom.testing.flowtest.model import (
    SUFFIX,
    Case,
    Expect,
    FlowTestError,
    FlowTestFile,
    load_flowtest,
)
from nodeloom.testing.flowtest.runner import CaseResult, run_case, run_file

__all__ = [
    "SUFFIX",
    "Case",
    "CaseResult",
    "Expect",
    "FlowTestError",
    "FlowTestFile",
    "load_flowtest",
    "run_case",
    "run_file",
]
