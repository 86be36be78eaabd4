"""The four benchmarks. Each returns its figures (beside their floors) and a verdict.

Every run emits its events (to `nodeloom.NullSink()`, which drops them after the engine
built them); every flow is loaded once, outside the timed region, and run once untimed
first (so lazy imports and caches are warm, as in a long-lived process).
"""

from __future__ import annotations

import asyncio
import functools
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nodeloom
from benchmarks import agents, browser, checkpoints, fleet, floors, graphs, recorded, server
from benchmarks.report import TIMES, Figure, Verdict
from benchmarks.timing import best_of, best_of_sync, calibrate, traced

SINK = nodeloom.NullSink()
PAUSE = 0.05  # what each awaiting node awaits, in seconds

# The bounds.
OVERHEAD_US = 15.0
SPREAD = 1.5
FAN_OUT_MS = 75.0
RUNS_PER_S = 5_000.0
KB_PER_RUN = 10.0
LEAK_KB_PER_RUN = 0.1  # ours, not the issue's: "retained ≈ 0"
LOAD_S = 0.2


@dataclass(frozen=True, slots=True)
class Sizes:
    chains: tuple[int, ...] = (10, 100, 1_000, 10_000)
    branches: int = 1_000
    runs: int = 10_000
    load_nodes: int = 10_000
    repeat: int = 7  # samples per best-of (chains, fan-out, load)
    batch_repeat: int = 3  # samples per best-of of the 10,000-run batch
    min_time: float = 0.05  # seconds one chain sample lasts at least
    agent_turns: int = 200  # turns per median (agent benchmark)
    server_runs: int = 200  # concurrent runs through `nodeloom serve` (server benchmark)
    browser_nodes: int = 500  # nodes of the flow the browser benchmark opens
    recorded_runs: int = 1_000  # concurrent recorded runs (recorded-run benchmark)
    recorded_samples: int = 200  # runs per median of the fixed cost per recorded run
    fleet_runs: int = fleet.RUNS  # runs per setup of the fleet benchmark
    fleet_workers: tuple[int, ...] = (1, 2, 4)  # its worker process counts


FULL = Sizes()
QUICK = Sizes(
    chains=(10, 100, 1_000),
    branches=100,
    runs=1_000,
    load_nodes=1_000,
    repeat=3,
    batch_repeat=1,
    min_time=0.005,
    agent_turns=20,
    server_runs=20,
    browser_nodes=100,
    recorded_runs=100,
    recorded_samples=10,
    fleet_runs=fleet.QUICK_RUNS,
    fleet_workers=(1, 2),
)


def _completed(result: nodeloom.RunResult, what: str) -> None:
    if result.status is not nodeloom.RunStatus.COMPLETED:
        raise RuntimeError(f"the {what} run ended {result.status.value}: {result.error}")


async def chains(sizes: Sizes) -> tuple[list[Figure], Verdict]:
    """Target 1: overhead per node on chains of trivial nodes, and its flatness in N."""
    per_node: list[Figure] = []
    overheads: dict[int, float] = {}
    for n in sizes.chains:
        flow = nodeloom.load(graphs.trivial_chain(n))
        settings = nodeloom.RunSettings(max_steps=n + 10)
        run = functools.partial(flow.run, "hi", sink=SINK, settings=settings)
        _completed(await run(), f"chain of {n}")
        engine = await best_of(run, sizes.repeat, await calibrate(run, sizes.min_time))
        floor_body = functools.partial(floors.chain, n)
        floor = await best_of(floor_body, sizes.repeat, await calibrate(floor_body, sizes.min_time))
        engine_us, floor_us = engine / n * 1e6, floor / n * 1e6
        overheads[n] = engine_us - floor_us
        per_node.append(
            Figure(
                f"chain.per_node.n={n}", f"chain of {n:,}: time per node", engine_us, "µs", floor_us
            )
        )
        per_node.append(
            Figure(
                f"chain.overhead.n={n}",
                f"chain of {n:,}: overhead per node",
                overheads[n],
                "µs",
                target=f"≤ {OVERHEAD_US:g} µs",
                passed=overheads[n] <= OVERHEAD_US,
            )
        )
    low, high = min(overheads.values()), max(overheads.values())
    spread = high / low
    per_node.append(
        Figure(
            "chain.spread",
            "chains: overhead spread (max ÷ min over N)",
            spread,
            TIMES,
            target=f"≤ {SPREAD:g}{TIMES}",
            passed=spread <= SPREAD,
        )
    )
    sizes_text = ", ".join(f"{n:,}" for n in sizes.chains)
    verdict = Verdict(
        1,
        all(o <= OVERHEAD_US for o in overheads.values()) and spread <= SPREAD,
        f"overhead per node {low:.2f} to {high:.2f} µs over N = {sizes_text}; "
        f"spread {spread:.2f}{TIMES}",
    )
    return per_node, verdict


async def fan_out(sizes: Sizes, registry: nodeloom.Registry) -> tuple[list[Figure], Verdict]:
    """Target 2: a fan-out of branches that each await 50 ms, wall time."""
    b = sizes.branches
    flow = nodeloom.load(graphs.fan_out(b, PAUSE), registry=registry)
    # The trigger plus b branches is b + 1 node executions: more than the default
    # max_steps (1,000) when b = 1,000.
    settings = nodeloom.RunSettings(max_steps=b + 10)
    run = functools.partial(flow.run, "hi", sink=SINK, settings=settings)
    _completed(await run(), "fan-out")
    engine = await best_of(run, sizes.repeat)
    floor = await best_of(functools.partial(floors.fan_out, b, PAUSE), sizes.repeat)
    wall_ms = engine * 1000
    figure = Figure(
        "fan_out.wall",
        f"fan-out of {b:,} branches of 50 ms: wall",
        wall_ms,
        "ms",
        floor * 1000,
        target=f"≤ {FAN_OUT_MS:g} ms",
        passed=wall_ms <= FAN_OUT_MS,
    )
    return [figure], Verdict(
        2, bool(figure.passed), f"wall {wall_ms:.1f} ms (best of {sizes.repeat})"
    )


async def concurrent_runs(
    sizes: Sizes, registry: nodeloom.Registry
) -> tuple[list[Figure], Verdict]:
    """Target 3: many concurrent runs of Trigger -> Sleep(50 ms) -> Merge: runs/s, memory."""
    runs = sizes.runs
    flow = nodeloom.load(graphs.three_nodes(PAUSE), registry=registry)

    async def batch() -> None:
        results = await asyncio.gather(*(flow.run("hi", sink=SINK) for _ in range(runs)))
        for result in results:
            _completed(result, "3-node")

    floor_batch = functools.partial(floors.concurrent_runs, runs, PAUSE)
    await batch()
    await floor_batch()
    wall = await best_of(batch, sizes.batch_repeat)
    floor_wall = await best_of(floor_batch, sizes.batch_repeat)
    # tracemalloc slows everything down: a pass of its own, after the timing.
    memory = await traced(batch)
    floor_memory = await traced(floor_batch)
    in_flight = memory.peak / runs / 1000
    retained = memory.retained / runs / 1000
    throughput = runs / wall
    figures = [
        Figure("concurrent.wall", f"{runs:,} concurrent runs: wall", wall, "s", floor_wall),
        Figure(
            "concurrent.throughput",
            f"{runs:,} concurrent runs: throughput",
            throughput,
            "runs/s",
            runs / floor_wall,
            higher_is_better=True,
            target=f"≥ {RUNS_PER_S:,.0f} runs/s",
            passed=throughput >= RUNS_PER_S,
        ),
        Figure(
            "concurrent.in_flight",
            "memory per run in flight (peak)",
            in_flight,
            "KB",
            floor_memory.peak / runs / 1000,
            target=f"≤ {KB_PER_RUN:g} KB",
            passed=in_flight <= KB_PER_RUN,
        ),
        Figure(
            "concurrent.retained",
            "memory per run retained after",
            retained,
            "KB",
            floor_memory.retained / runs / 1000,
            ratio_shown=False,
            target=f"< {LEAK_KB_PER_RUN:g} KB (leak check)",
            passed=retained < LEAK_KB_PER_RUN,
        ),
    ]
    passed = throughput >= RUNS_PER_S and in_flight <= KB_PER_RUN
    judged = (
        f"{throughput:,.0f} runs/s (best of {sizes.batch_repeat}); the {KB_PER_RUN:g} KB bound is "
        f"applied to the peak in-flight memory per run, {in_flight:.2f} KB "
        f"(the stricter figure; retained after the batch: {retained:.3f} KB per run)"
    )
    return figures, Verdict(3, passed, judged)


def load(sizes: Sizes) -> tuple[list[Figure], Verdict]:
    """Target 4: load + validate a chain of trivial nodes, from a dict and from a file."""
    n = sizes.load_nodes
    document = graphs.trivial_chain(n)
    text = graphs.as_json(document)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "chain.json"
        path.write_text(text, encoding="utf-8")
        nodeloom.load(document)  # warm: the default registry, the executors' imports
        from_dict = best_of_sync(lambda: nodeloom.load(document), sizes.repeat)
        from_file = best_of_sync(lambda: nodeloom.load(path), sizes.repeat)
        floor_text = best_of_sync(lambda: floors.load_text(text), sizes.repeat)
        floor_file = best_of_sync(lambda: floors.load_file(path), sizes.repeat)
    target = f"≤ {LOAD_S:g} s"
    figures = [
        Figure(
            "load.dict",
            f"load + validate {n:,} nodes (dict)",
            from_dict,
            "s",
            floor_text,
            target=target,
            passed=from_dict <= LOAD_S,
        ),
        Figure(
            "load.file",
            f"load + validate {n:,} nodes (JSON file)",
            from_file,
            "s",
            floor_file,
            target=target,
            passed=from_file <= LOAD_S,
        ),
    ]
    judged = (
        f"load of the document as a dict, {from_dict:.3f} s (best of {sizes.repeat}); "
        f"from a JSON file: {from_file:.3f} s"
    )
    return figures, Verdict(4, from_dict <= LOAD_S, judged)


async def run_all(sizes: Sizes, progress: bool = True) -> tuple[list[Figure], list[Verdict]]:
    registry = graphs.registry()
    results = []
    _say(progress, "chains")
    results.append(await chains(sizes))
    _say(progress, "fan-out")
    results.append(await fan_out(sizes, registry))
    _say(progress, "concurrent runs")
    results.append(await concurrent_runs(sizes, registry))
    _say(progress, "load")
    results.append(load(sizes))
    figures = [f for found, _ in results for f in found]
    verdicts = [verdict for _, verdict in results]
    _say(progress, "agent turns")
    agent_figures, agent_verdicts = await agents.agent_turns(sizes.agent_turns)
    _say(progress, "checkpoints")
    store_figures, store_verdicts = await checkpoints.checkpoints(
        sizes.chains[-2] if len(sizes.chains) > 1 else sizes.chains[0], sizes.repeat
    )
    _say(progress, "recorded runs")
    recorded_figures, recorded_verdicts = await recorded.recorded_runs(
        sizes.recorded_runs, sizes.recorded_samples, sizes.batch_repeat
    )
    store_figures += recorded_figures
    store_verdicts += recorded_verdicts
    _say(progress, "server")
    server_figures, server_verdict = await server.server_load(sizes.server_runs)
    _say(progress, "fleet")
    fleet_figures, fleet_verdict = await fleet.fleet_load(sizes.fleet_runs, sizes.fleet_workers)
    _say(progress, "browser")
    browser_figures, browser_verdicts = await browser.browser_ui(sizes.browser_nodes)
    return (
        figures + agent_figures + store_figures + server_figures + fleet_figures + browser_figures,
        verdicts
        + agent_verdicts
        + store_verdicts
        + [server_verdict, fleet_verdict]
        + browser_verdicts,
    )


def _say(progress: bool, name: str) -> None:
    if progress:
        print(f"... {name}", file=sys.stderr, flush=True)
