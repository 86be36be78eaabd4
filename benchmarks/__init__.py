"""nodeloom's benchmarks: one command, each figure beside a plain-Python floor.

    python -m benchmarks            # the full suite, a table
    python -m benchmarks --json     # machine-readable
    python -m benchmarks --quick    # smaller sizes: a smoke run, not a verdict

Modules: `graphs` (the documents and the benchmark-only node pack), `floors` (the same
work in plain Python/asyncio), `timing` (best-of-k clocks, tracemalloc), `engine` (the
four benchmarks), `report` (figures, verdicts, table, JSON).
"""
