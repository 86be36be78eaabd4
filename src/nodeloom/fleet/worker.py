"""One worker process: a Dramatiq worker on the Redis queue whose async actor runs jobs
through a WorkerHost, `concurrency` at once. Started by `nodeloom worker` (one per
`--processes`) as `python -m nodeloom.fleet.worker --concurrency C --grace S`, with
the queue's URL in NODELOOM_QUEUE_URL (not on the command line: it may hold a password).

SIGTERM or SIGINT: it stops taking jobs (messages it fetched but had not started go
back to the queue), and its runs start no more nodes: each is handed back (recorded
`interrupted`, its resume enqueued) once its running nodes have finished, or ends if
nothing was left. After `grace` seconds the runs still running nodes are handed back at
once (those nodes cancelled, run again on resume). Then it exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import threading
from typing import Any

from nodeloom.fleet.broker import (
    ACTOR_NAME,
    QUEUE_NAME,
    enqueue,
    make_broker,
    queue_depth,
    queue_url,
)
from nodeloom.fleet.delivery import Deliveries
from nodeloom.fleet.host import WorkerHost
from nodeloom.observability.heap import settle_heap
from nodeloom.observability.logs import configure_logging

log = logging.getLogger("nodeloom.fleet")

# Set to a path: each worker process profiles its event loop (cProfile) into PATH.<pid>.
PROFILE_VARIABLE = "NODELOOM_WORKER_PROFILE"
POLL_MS = 100


def poll_ms() -> int:
    """How long (at most) the worker's consumer sleeps between fetches while it has no
    free slot or the queue is empty: a freed slot waits this long for its next job."""
    return _setting("NODELOOM_QUEUE_POLL_MS", POLL_MS)


def prefetch(concurrency: int) -> int:
    """How many jobs a worker takes from the queue at once: its slots and as many waiting
    (a freed slot starts the next at once, not after a poll)."""
    return _setting("NODELOOM_QUEUE_PREFETCH", 2 * concurrency)


def _setting(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{name} must be a whole number ≥ 1; got {text!r}")
    return value


def run_worker(url: str, *, concurrency: int, grace: float, database: str | None = None) -> int:
    import dramatiq
    from dramatiq.asyncio import get_event_loop_thread
    from dramatiq.middleware import Middleware

    broker = make_broker(url, worker=True)
    host = WorkerHost(
        database,
        lambda job: enqueue(broker, job),
        Deliveries(broker.client),
        lambda: queue_depth(broker),
        concurrency=concurrency,
    )

    def on_loop(coroutine: Any) -> Any:
        thread = get_event_loop_thread()
        assert thread is not None
        return thread.run_coroutine(coroutine)

    profile = os.environ.get(PROFILE_VARIABLE)

    class Lifecycle(Middleware):  # after AsyncIO: its loop runs when these are called
        def before_worker_boot(self, broker: Any, worker: Any) -> None:
            on_loop(host.open())
            if profile:
                on_loop(_profiling(f"{profile}.{os.getpid()}"))

        def after_worker_shutdown(self, broker: Any, worker: Any) -> None:
            on_loop(host.aclose())

    broker.add_middleware(Lifecycle())

    def nodeloom_job(payload: Any) -> None:  # in a worker thread; the run on the loop
        host.handle(payload, on_loop)

    dramatiq.actor(nodeloom_job, broker=broker, actor_name=ACTOR_NAME, queue_name=QUEUE_NAME)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    worker = dramatiq.Worker(broker, worker_threads=concurrency, worker_timeout=poll_ms())
    worker.queue_prefetch = prefetch(concurrency)
    worker.start()  # the store is open, the flows' nodes imported: start-up is over
    settle_heap()
    log.info("worker ready: %d run(s) at once, grace %gs", concurrency, grace)
    while not stop.wait(0.5):
        pass
    log.info("stopping: no new jobs, no new nodes; running nodes get up to %gs", grace)
    thread = get_event_loop_thread()
    assert thread is not None
    drained = asyncio.run_coroutine_threadsafe(host.drain(grace), thread.loop)
    worker.stop(timeout=int((grace + 60) * 1000))
    drained.result(timeout=5)
    log.info("stopped")
    return 0


async def _profiling(path: str) -> None:
    """Profile this event loop's thread (the jobs' work) until the process exits, then
    write the statistics to `path` (read them with `python -m pstats PATH`)."""
    import atexit
    import cProfile
    import time

    profiler = cProfile.Profile(time.thread_time)
    profiler.enable()
    atexit.register(lambda: (profiler.disable(), profiler.dump_stats(path)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nodeloom.fleet.worker")
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--grace", type=float, default=30.0)
    arguments = parser.parse_args(argv)
    log_format = os.environ.get("NODELOOM_LOG_FORMAT", "text")  # set by `nodeloom worker`
    if log_format == "json":
        configure_logging("json")
    else:
        logging.basicConfig(
            level=logging.INFO,
            stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(name)s pid=%(process)d %(message)s",
        )
    logging.getLogger("dramatiq").setLevel(logging.WARNING)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    url = queue_url()
    if url is None:
        print("nodeloom worker: NODELOOM_QUEUE_URL is not set", file=sys.stderr)
        return 2
    try:
        poll_ms(), prefetch(arguments.concurrency)
    except ValueError as exc:  # exit 2: the supervisor does not start it again
        print(f"nodeloom worker: {exc}", file=sys.stderr)
        return 2
    return run_worker(url, concurrency=arguments.concurrency, grace=arguments.grace)


if __name__ == "__main__":
    sys.exit(main())
