"""`nodeloom test`: run flow test files (`*.flowtest.yaml`) like a test runner."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from nodeloom.engine.result import EXIT_INVALID
from nodeloom.testing.flowtest import SUFFIX, FlowTestError, load_flowtest, run_file
from nodeloom.testing.flowtest.junit import FileOutcome, junit_xml

EXIT_FAILED = 1
_SKIP_DIRS = {".git", "node_modules", ".venv", "__pycache__"}


@click.command("test")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--junit", "junit_file", type=click.Path(), help="Also write a JUnit XML report.")
@click.option("-k", "select", metavar="TEXT", help="Run only tests whose name contains TEXT.")
def test_command(paths: tuple[str, ...], junit_file: str | None, select: str | None) -> None:
    """Run the flow tests in PATHS (files, or folders searched for *.flowtest.yaml;
    default: the current folder).

    Exit codes: 0 every test passed, 1 a test failed, 2 a test file is invalid or none
    was found.
    """
    console = Console(highlight=False, soft_wrap=True)
    began = time.perf_counter()
    files = _discover(paths or (".",))
    if not files:
        where = ", ".join(paths or (".",))
        console.print(f"[red]no flow test files ({'*' + SUFFIX}) in {escape(where)}[/]")
        sys.exit(EXIT_INVALID)
    outcomes = [_run(path, select, console) for path in files]
    if junit_file:
        Path(junit_file).write_text(junit_xml(outcomes), encoding="utf-8")
    sys.exit(_summary(outcomes, time.perf_counter() - began, console))


def _discover(paths: tuple[str, ...]) -> list[Path]:
    found: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found += sorted(
                p
                for p in path.rglob("*" + SUFFIX)
                if not _SKIP_DIRS.intersection(p.relative_to(path).parts)
            )
        else:
            found.append(path)  # a missing file is reported when it is read
    return found


def _run(path: Path, select: str | None, console: Console) -> FileOutcome:
    console.print(f"[bold]{escape(str(path))}[/]")
    try:
        test_file = load_flowtest(path)
    except FlowTestError as exc:
        console.print(_indent(f"[red]error[/] {escape(str(exc))}", 2))
        return FileOutcome(path, error=str(exc))
    cases = asyncio.run(run_file(test_file, select))
    for case in cases:
        mark = "[green]✓[/]" if case.passed else "[red]✗[/]"
        console.print(f"  {mark} {escape(case.name)} [dim]({case.duration:.2f} s)[/]")
        if not case.passed:
            console.print(_indent(escape(case.report()), 6))
    return FileOutcome(path, cases)


def _summary(outcomes: list[FileOutcome], seconds: float, console: Console) -> int:
    cases = [case for outcome in outcomes for case in outcome.cases]
    passed = sum(case.passed for case in cases)
    failed = len(cases) - passed
    invalid = sum(outcome.error is not None for outcome in outcomes)
    parts = [f"[green]{passed} passed[/]"]
    if failed:
        parts.append(f"[red]{failed} failed[/]")
    if invalid:
        parts.append(f"[red]{invalid} invalid file{'s' if invalid > 1 else ''}[/]")
    console.print(", ".join(parts) + f" in {seconds:.2f} s")
    if invalid:
        return EXIT_INVALID
    return EXIT_FAILED if failed else 0


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line for line in text.splitlines())
