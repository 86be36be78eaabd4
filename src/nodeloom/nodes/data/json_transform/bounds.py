"""Evaluating JSONata off the event loop, within a time and depth bound that cancels it.

jsonata-python is pure Python and a JSONata expression can loop (a tail-recursive
function never returns). Evaluated on the event loop it would block every run, beyond the
reach of node and run timeouts. So each evaluation runs in a worker thread, and a guard
called on entry to every JSONata evaluation step stops it (JSONata error D1012/D1011) when:

- the awaiting node is cancelled (its timeout fired, the run timed out or was cancelled):
  the executor sets the guard's `cancelled` flag, and the thread stops at its next step;
- it has run `TIME_LIMIT_S` seconds, for a node without a timeout;
- its evaluation is `MAX_DEPTH` steps deep (runaway non-tail recursion), before Python's
  own recursion limit would be reached in the thread.

The worker threads are a pool of their own (`WORKERS` threads), so expressions that loop
until their bound can never starve the event loop's default executor (DNS lookups, file
reads); more evaluations than threads wait their turn, and a cancelled one never starts.
A thread cannot be killed, but the guard runs between every two steps, and a single step
is bounded: JSONata regexes are compiled by RE2 (linear time, `nodeloom.regex`).
The guard is bound per evaluation (the library's own `timeout` option starts its clock
when the expression is compiled, and keeps its counters on the shared compiled object).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from jsonata.jexception import JException
from jsonata.regex_engine import RegexFlags

from nodeloom.regex import compile_pattern

TIME_LIMIT_S = 60.0
MAX_DEPTH = 500
WORKERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="nodeloom-jsonata")


class Guard:
    """Entry/exit callbacks for one evaluation, passed to it as bindings."""

    def __init__(self, time_limit: float = TIME_LIMIT_S, max_depth: int = MAX_DEPTH) -> None:
        self.cancelled = threading.Event()
        self.deadline = time.monotonic() + time_limit
        self.time_limit = time_limit
        self.max_depth = max_depth
        self.depth = 0
        self.started = time.monotonic()
        self.finished = threading.Event()  # set when the worker thread is done

    def bindings(self) -> dict[str, Any]:
        return {"__evaluate_entry": self._entry, "__evaluate_exit": self._exit}

    def _entry(self, expr: Any, value: Any, env: Any) -> None:
        if not env.is_parallel_call:
            self.depth += 1
        self._check()

    def _exit(self, expr: Any, value: Any, env: Any, result: Any) -> None:
        if not env.is_parallel_call:
            self.depth -= 1
        self._check()

    def _check(self) -> None:
        now = time.monotonic()
        if self.cancelled.is_set() or now > self.deadline:
            raise JException("D1012", -1, round((now - self.started) * 1000))
        if self.depth > self.max_depth:
            raise JException("D1011", -1)


def re2_engine(pattern: str, flags: RegexFlags) -> Any:
    """jsonata-python's `regex_engine` hook: JSONata `/regex/` literals compiled by RE2."""
    return compile_pattern(pattern, ignore_case=flags.case_insensitive, multiline=flags.multiline)
