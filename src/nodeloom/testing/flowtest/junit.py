"""JUnit XML for flow test results (what CI systems show as a test report)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from nodeloom.testing.flowtest.runner import CaseResult


@dataclass
class FileOutcome:
    """One test file's results, or the reason it could not be read (`error`)."""

    path: Path
    cases: list[CaseResult] = field(default_factory=list)
    error: str | None = None


def junit_xml(outcomes: list[FileOutcome]) -> str:
    """`<testsuites>` with a `<testsuite>` per file and a `<testcase>` per test: a failed
    expectation is a `<failure>`, a test (or file) that could not run an `<error>`."""
    root = ET.Element("testsuites", name="nodeloom test")
    totals = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
    for outcome in outcomes:
        suite = ET.SubElement(root, "testsuite", name=str(outcome.path))
        counts = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
        if outcome.error is not None:
            case = ET.SubElement(suite, "testcase", classname=_classname(outcome.path))
            case.set("name", "(the test file)")
            case.set("time", "0")
            _detail(case, "error", outcome.error)
            counts["tests"] = counts["errors"] = 1
        for result in outcome.cases:
            case = ET.SubElement(suite, "testcase", classname=_classname(outcome.path))
            case.set("name", result.name)
            case.set("time", f"{result.duration:.3f}")
            counts["tests"] += 1
            counts["time"] += result.duration
            if result.error is not None:
                counts["errors"] += 1
                _detail(case, "error", result.error)
            elif result.problems:
                counts["failures"] += 1
                _detail(case, "failure", "\n".join(result.problems))
        for key, value in counts.items():
            suite.set(key, f"{value:.3f}" if key == "time" else str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, f"{value:.3f}" if key == "time" else str(int(value)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode")


def _classname(path: Path) -> str:
    return path.name.removesuffix(".flowtest.yaml")


def _detail(case: ET.Element, tag: str, text: str) -> None:
    element = ET.SubElement(case, tag, message=text.splitlines()[0] if text else tag)
    element.text = text
