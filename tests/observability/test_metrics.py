"""RunMetrics adds the worker registry's rows up: a stopped worker's counts stay in the
totals (not in the in-flight gauge), and a row written by another version, or garbled,
adds nothing and breaks nothing. Rows come from a real store."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from nodeloom.observability.metrics import RunMetrics
from nodeloom.plugins.contract import Event
from nodeloom.store import Store


def samples(text: bytes) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text.decode())
        for s in family.samples
    }


async def test_stopped_workers_count_in_totals_and_garbled_rows_add_nothing(store: Store):
    worker = RunMetrics()
    for kind in ("run_started", "run_completed"):
        worker.emit(Event(kind, {"duration_ms": 5.0}, run_id="r1"))
    worker.emit(Event("completed", {"duration_ms": 20.0}, node_id="a", node_type="sleep"))
    fields = {"host": "h", "pid": 1, "role": "worker", "concurrency": 2}
    await store.beat_worker("stopped", in_flight=0, metrics=worker.snapshot(), **fields)
    await store.stop_worker("stopped", metrics=worker.snapshot())
    await store.beat_worker(
        "newer", in_flight=1, metrics={"v": 99, "runs": {"started": 50}}, **fields
    )
    garbled = {"v": 1, "runs": {"started": "many", "failed": -3}, "buckets": [1], "nodes": 7}
    await store.beat_worker("garbled", in_flight=2, metrics=garbled, **fields)
    odd_nodes = {
        "v": 1,
        "runs": {},
        "buckets": worker.snapshot()["buckets"],
        "nodes": {"x": {}, "y": [1]},
    }
    await store.beat_worker("odd", in_flight=0, metrics=odd_nodes, **fields)

    here = RunMetrics()
    here.emit(Event("run_started", run_id="r2"))
    rows = await store.list_workers(seen_within=None, stopped=True)
    live = {row.id for row in await store.list_workers()}
    found = samples(here.render("me", 1, rows=rows, live=live))

    assert found[("nodeloom_runs_started_total", frozenset())] == 2  # me + the stopped one
    assert found[("nodeloom_runs_completed_total", frozenset())] == 1
    assert found[("nodeloom_runs_failed_total", frozenset())] == 0
    assert found[("nodeloom_node_duration_seconds_count", frozenset({("node_type", "sleep")}))] == 1
    in_flight = {
        dict(labels)["worker"]: value
        for (name, labels), value in found.items()
        if name == "nodeloom_runs_in_flight"
    }
    assert in_flight == {"me": 1, "newer": 1, "garbled": 2, "odd": 0}  # not the stopped one
