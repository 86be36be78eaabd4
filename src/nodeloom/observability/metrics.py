"""Run metrics in the Prometheus text format, for one process and for a fleet.

`RunMetrics` is an event sink (a RunService's `observer`): it counts runs started,
resumed, completed, failed and cancelled, and puts each node's duration in a histogram
by node type. `snapshot()` is those counts as JSON, which a worker's WorkerBeat writes
to its registry row; `render(...)` is the text a `GET /metrics` answers: this process's
counts plus every other registry row's, runs in flight per worker, and queue depth.

    metrics = RunMetrics()
    runs = RunService(store, registry, observer=metrics)
    ...
    text = metrics.render(worker_id, in_flight, rows=await store.list_workers(...))
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from nodeloom.plugins.contract import Event

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SNAPSHOT_VERSION = 1
# Node durations, in seconds: from a data step's milliseconds to a long agent call.
BUCKETS: tuple[float, ...] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
RUN_COUNTS = ("started", "resumed", "completed", "failed", "cancelled")
_COUNTED = {f"run_{name}": name for name in RUN_COUNTS}


class Row(Protocol):
    """What `render` reads of a worker registry row (nodeloom.store.WorkerRecord)."""

    id: str
    role: str
    in_flight: int
    metrics: dict[str, Any]
    stopped_at: Any


@dataclass
class _Durations:
    counts: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    sum: float = 0.0


class RunMetrics:
    """Counts of this process's runs and node durations, fed by their events."""

    def __init__(self) -> None:
        self.runs = dict.fromkeys(RUN_COUNTS, 0)
        self.nodes: dict[str, _Durations] = {}
        self._lock = threading.Lock()  # render may run in a thread of its own
        self._collector = _FleetCollector(self)
        self.registry = CollectorRegistry(auto_describe=False)  # one per app
        self.registry.register(self._collector)

    # -- fed by events --------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        kind = event.event_type
        if kind == "completed":
            data = event.data
            if data is None or data.get("pinned"):
                return
            duration = data.get("duration_ms")
            if isinstance(duration, int | float):
                self.observe(event.node_type or "unknown", duration / 1000)
        elif kind in _COUNTED:
            with self._lock:
                self.runs[_COUNTED[kind]] += 1

    def observe(self, node_type: str, seconds: float) -> None:
        """One node execution of `node_type` that took `seconds`."""
        with self._lock:
            durations = self.nodes.get(node_type)
            if durations is None:
                durations = self.nodes[node_type] = _Durations()
            durations.counts[bisect.bisect_left(BUCKETS, seconds)] += 1
            durations.sum += seconds

    # -- shared with the fleet ------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The counts as JSON (a registry row's `metrics`)."""
        with self._lock:
            return {
                "v": SNAPSHOT_VERSION,
                "runs": dict(self.runs),
                "buckets": list(BUCKETS),
                "nodes": {
                    node_type: {"counts": list(d.counts), "sum": d.sum}
                    for node_type, d in self.nodes.items()
                },
            }

    def render(
        self,
        worker_id: str,
        in_flight: int,
        *,
        rows: Sequence[Row] = (),
        live: Iterable[str] = (),
        queue_depths: Mapping[str, int] | None = None,
    ) -> bytes:
        """The Prometheus text: counts of this process (`worker_id`, `in_flight` runs
        now) added to those of every other row in `rows` (stopped ones included: totals
        never go down when a worker exits cleanly); runs in flight for this process and
        each row whose id is in `live`; `queue_depths` by queue name (None: no queue)."""
        with self._lock:
            self._collector.view = _View(worker_id, in_flight, list(rows), set(live), queue_depths)
            try:
                return generate_latest(self.registry)
            finally:
                self._collector.view = None


@dataclass
class _View:
    worker_id: str
    in_flight: int
    rows: list[Row]
    live: set[str]
    queue_depths: Mapping[str, int] | None


class _FleetCollector:
    """Builds the metric families of one `render` from its `_View` (a custom collector:
    the fleet's counts are sums of snapshots, not counters this process increments)."""

    def __init__(self, metrics: RunMetrics) -> None:
        self.metrics = metrics
        self.view: _View | None = None

    def collect(self) -> Iterator[Metric]:
        view = self.view
        if view is None:
            return
        own = self.metrics
        runs = dict(own.runs)
        nodes = {t: (list(d.counts), d.sum) for t, d in own.nodes.items()}
        for row in view.rows:
            if row.id != view.worker_id:
                _add(runs, nodes, row.metrics)
        yield from _run_counters(runs)
        yield _durations(nodes)
        in_flight = GaugeMetricFamily(
            "nodeloom_runs_in_flight", "Runs running now, per worker process.", labels=["worker"]
        )
        in_flight.add_metric([view.worker_id], view.in_flight)
        workers: dict[str, int] = {}
        for row in view.rows:
            if row.id in view.live and row.id != view.worker_id:
                in_flight.add_metric([row.id], row.in_flight)
                workers[row.role] = workers.get(row.role, 0) + 1
        yield in_flight
        live = GaugeMetricFamily(
            "nodeloom_workers_live",
            "Processes seen in the worker registry recently, by role.",
            labels=["role"],
        )
        for role, count in sorted(workers.items()):
            live.add_metric([role], count)
        yield live
        if view.queue_depths is not None:
            depth = GaugeMetricFamily(
                "nodeloom_queue_depth", "Messages waiting in the run queue.", labels=["queue"]
            )
            for queue, count in sorted(view.queue_depths.items()):
                depth.add_metric([queue], count)
            yield depth


def _run_counters(runs: Mapping[str, int]) -> Iterator[Metric]:
    docs = {
        "started": "Runs started (new runs, not resumes).",
        "resumed": "Runs taken up again after a pause or a crash.",
        "completed": "Runs that completed.",
        "failed": "Runs that failed.",
        "cancelled": "Runs that were cancelled.",
    }
    for name in RUN_COUNTS:
        yield CounterMetricFamily(f"nodeloom_runs_{name}", docs[name], value=runs.get(name, 0))


def _durations(nodes: Mapping[str, tuple[list[int], float]]) -> Metric:
    family = HistogramMetricFamily(
        "nodeloom_node_duration_seconds",
        "How long node executions took, by node type.",
        labels=["node_type"],
    )
    bounds = [*(_le(b) for b in BUCKETS), "+Inf"]
    for node_type in sorted(nodes):
        counts, total = nodes[node_type]
        cumulative, buckets = 0, []
        for bound, count in zip(bounds, counts, strict=True):
            cumulative += count
            buckets.append((bound, cumulative))
        family.add_metric([node_type], buckets, sum_value=total)
    return family


def _le(bound: float) -> str:
    return str(float(bound))


def _add(
    runs: dict[str, int], nodes: dict[str, tuple[list[int], float]], snapshot: Mapping[str, Any]
) -> None:
    """Add a registry row's snapshot to the totals; a snapshot of another version or
    bucket layout adds only what it shares."""
    if not isinstance(snapshot, Mapping) or snapshot.get("v") != SNAPSHOT_VERSION:
        return
    counted = snapshot.get("runs")
    if isinstance(counted, Mapping):
        for name in RUN_COUNTS:
            value = counted.get(name)
            if isinstance(value, int) and value >= 0:
                runs[name] = runs.get(name, 0) + value
    if snapshot.get("buckets") != list(BUCKETS) or not isinstance(snapshot.get("nodes"), Mapping):
        return
    for node_type, entry in snapshot["nodes"].items():
        if not isinstance(entry, Mapping):
            continue
        counts, total = entry.get("counts"), entry.get("sum")
        if (
            not isinstance(counts, list)
            or len(counts) != len(BUCKETS) + 1
            or not all(isinstance(c, int) and c >= 0 for c in counts)
            or not isinstance(total, int | float)
            or not math.isfinite(total)
        ):
            continue
        mine, my_total = nodes.get(str(node_type), ([0] * (len(BUCKETS) + 1), 0.0))
        summed = [a + b for a, b in zip(mine, counts, strict=True)]
        nodes[str(node_type)] = (summed, my_total + total)
