"""`python -m benchmarks [--quick] [--json]`: run the suite and print its report.

The exit code is 0 even when a target is missed: this is a report, and FAIL says so.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence

from benchmarks import engine, report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="nodeloom's benchmarks, each figure beside a plain-Python floor.",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    parser.add_argument(
        "--quick", action="store_true", help="smaller sizes: a smoke run, not a verdict"
    )
    args = parser.parse_args(argv)
    sizes = engine.QUICK if args.quick else engine.FULL
    figures, verdicts = asyncio.run(engine.run_all(sizes))
    render = report.as_json if args.json else report.text
    print(render(figures, verdicts, quick=args.quick))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
