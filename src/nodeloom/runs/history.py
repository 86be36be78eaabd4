"""A recorded run's node executions, as a resumed run consults them: which executions are
done (replayed, not run again), which were in flight, and which nodes were skipped."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable

from nodeloom.engine.checkpoint import Prior
from nodeloom.store import NodeExecution

IN_FLIGHT = ("started", "waiting")


class History:
    """Executions are matched by their position in the run: node id (with its Loop
    prefix) and activation (Loop iterations, and which delivery started an each-node; see
    docs/durable-runs.md). What the execution received (its input hash) is not part of
    the match: a parameter that renders differently on resume (`{{ now() }}`, a masked
    credential) still finds its record; the difference is reported, not run.

    Records written before positions were recorded (no activation) are matched by node id
    and input hash, as they were then. Each record is used once; several at one position
    (a Loop node that retried ran its body's iterations again) are used in the order they
    were recorded."""

    def __init__(self, rows: Iterable[NodeExecution]) -> None:
        self._by_position: dict[tuple[str, str], deque[tuple[int, Prior]]] = {}
        self._by_inputs: dict[tuple[str, str], deque[tuple[int, Prior]]] = {}
        self._last: dict[str, int] = {}
        self._skips: Counter[str] = Counter()
        done: list[tuple[NodeExecution, Prior]] = []
        in_flight: list[tuple[NodeExecution, Prior]] = []
        for row in sorted(rows, key=lambda r: (r.node_id, r.execution)):
            self._last[row.node_id] = max(self._last.get(row.node_id, 0), row.execution)
            if row.status == "skipped":
                self._skips[row.node_id] += 1
                continue
            prior = Prior(
                row.status,
                row.outputs,
                row.usage,
                row.state_delta,
                row.input_hash,
                row.inputs,
                row.parameters,
            )
            if prior.done:
                done.append((row, prior))
            elif row.status in IN_FLIGHT:
                in_flight.append((row, prior))
            # else a failure that stopped the run: it runs again, as new
        for row, prior in sorted(done + in_flight, key=lambda pair: pair[0].execution):
            if row.activation is not None:
                key = (row.node_id, row.activation)
                self._by_position.setdefault(key, deque()).append((row.execution, prior))
        for row, prior in done + in_flight:  # a finished record is preferred
            if row.activation is None and row.input_hash is not None:
                key = (row.node_id, row.input_hash)
                self._by_inputs.setdefault(key, deque()).append((row.execution, prior))

    def match(
        self, node_id: str, activation: str, input_hash: str | None
    ) -> tuple[int, Prior] | None:
        """The recorded execution this one repeats (taken: it matches once), or None."""
        queue = self._by_position.get((node_id, activation))
        if queue:
            return queue.popleft()
        if input_hash is None:
            return None
        queue = self._by_inputs.get((node_id, input_hash))
        if not queue:
            return None
        return queue.popleft()

    def last_execution(self, node_id: str) -> int:
        return self._last.get(node_id, 0)

    def take_skip(self, node_id: str) -> bool:
        """True (once per recorded skip) if this node's skip is on record already."""
        if self._skips[node_id] > 0:
            self._skips[node_id] -= 1
            return True
        return False
