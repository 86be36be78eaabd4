"""The run recorder: the engine's event sink and checkpoint hooks, written to a Store.

Nothing the engine does waits for the database, except an `external` node, which waits
until everything before it is durable (`barrier`). Events and checkpoints are appended to
buffers synchronously; within WINDOW_SECONDS a write takes whatever has accumulated to
the store, whose committer commits the writes of every run of the process together
(group commit across runs): while a node runs, the previous nodes' records are written;
a chain of fast nodes is written in a few writes. No task waits while there is nothing
to write. The buffers are cut only between the engine's synchronous steps, so every
batch leaves a consistent prefix of the run in the store: a node's completion and its
`completed` event land together. At the run's end, `detach` hands the rest to the caller,
which writes it with the run's end in one write (`Store.end_run`).

A new run's creation rides its first write: the recorder holds the run prepared
(`Store.prepare_run`, `created`) and its first write creates it with its first records;
a run that ends before that hands it to `end_run` with the rest (`detach`). A short run
is thus created, recorded and ended in one transaction. Until it is written the run does
not exist in the store: `barrier` (before an external node) and `wait_created` wait
for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from nodeloom.engine.checkpoint import Ticket, input_hash, json_safe, mismatch
from nodeloom.engine.events import EventSink, NullSink
from nodeloom.plugins.contract import Event
from nodeloom.runs.history import History
from nodeloom.store import Store
from nodeloom.store.creation import NewRun

if TYPE_CHECKING:
    from nodeloom.engine.topology import PlannedNode

HEARTBEAT_SECONDS = 15.0
WINDOW_SECONDS = 0.002  # how long records wait to gather before they are handed to the store


class Recorder:
    """Records one run. Use as `async with Recorder(store, run_id, sink=...) as recorder:`
    and pass it to `Flow.run(sink=recorder, checkpoints=recorder)`. Events go on to `sink`
    as they happen, whether or not they are written yet.

    `history` (a resumed run): executions on record are replayed, not recorded again, and
    skips on record are not reported again. `on_failure(run_id, error)` is called when
    the store cannot be written (the run should stop: it is no longer recorded); if that
    write carried the run's creation (`created`, still set), the run was never written.
    A cancel asked by another process is looked for by the RunService, for all its runs
    at once (runs/cancels.py).
    """

    def __init__(
        self,
        store: Store,
        run_id: str,
        *,
        sink: EventSink | None = None,
        history: History | None = None,
        heartbeat: float = HEARTBEAT_SECONDS,
        on_failure: Callable[[str, BaseException], None] | None = None,
        created: NewRun | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.woken = False  # a timer service wakes this run's deadlines (Checkpoints)
        self.sink = sink or NullSink()
        self.history = history
        self.heartbeat = heartbeat
        self.on_failure = on_failure
        self.error: BaseException | None = None
        self._events: list[Event] = []
        self._nodes: list[dict[str, Any]] = []
        self.created = created  # the run's creation, until a write carries it
        self._handed = 0 if created is None else 1  # records (and creation) handed over
        self._written = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._closing = False
        self._detached = False  # the caller writes what is left (detach)
        self._executions: dict[str, int] = {}
        self._writer: asyncio.Task[None] | None = None  # the write in flight, if any
        self._beat: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> Recorder:
        if self.heartbeat > 0:
            self._beat = asyncio.create_task(self._beat_loop())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close_quietly(self) -> None:
        """Close; a failed write stays in `error` for the caller to report."""
        with contextlib.suppress(Exception):
            await self.close()

    async def close(self) -> None:
        """Write everything handed over, then stop. Raises the store's error if a write
        failed."""
        if self._beat is not None:
            self._beat.cancel()
            await asyncio.gather(self._beat, return_exceptions=True)
            self._beat = None
        self._closing = True
        self._write_now()
        if self._writer is not None:
            await asyncio.gather(self._writer, return_exceptions=True)
        if self.error is not None:
            raise self.error

    async def detach_quietly(self) -> tuple[list[Event], list[dict[str, Any]]]:
        """`detach()`, or nothing if a write failed (the caller ends the run all the
        same; `error` holds the failure)."""
        try:
            return await self.detach()
        except Exception:
            return [], []

    async def detach(self) -> tuple[list[Event], list[dict[str, Any]]]:
        """Stop writing (after the write in flight) and hand back the events and
        checkpoint changes not written yet, for the caller's last write: the run's end
        written with them in one transaction (`Store.finish_run(events=, nodes=)`).
        Raises the store's error if a write failed."""
        if self._beat is not None:
            self._beat.cancel()
            await asyncio.gather(self._beat, return_exceptions=True)
            self._beat = None
        self._detached = self._closing = True
        self._cancel_timer()
        if self._writer is not None:
            await asyncio.gather(self._writer, return_exceptions=True)
        if self.error is not None:
            raise self.error
        events, nodes = self._events, self._nodes  # `created`, if still set, goes with them
        self._events, self._nodes = [], []
        return events, nodes

    async def flush(self) -> None:
        """Wait until everything handed over so far is written."""
        await self.barrier()

    async def wait_created(self) -> None:
        """Wait until the run's creation is written (at once if it was), without a write
        of its own: the next write (at most WINDOW_SECONDS away) carries it. Raises the
        store's error if that write failed."""
        if self.created is None:
            return
        if self.error is not None:
            raise self.error
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((1, future))  # the creation is the first thing handed over
        if self._timer is None and self._writer is None and not self._detached:
            self._timer = asyncio.get_running_loop().call_later(WINDOW_SECONDS, self._write_now)
        await future

    def ended(self, error: BaseException | None = None) -> None:
        """The caller's last write (what `detach` handed back, `created` with it) is
        committed, or failed with `error`: release whoever waits."""
        if error is not None:
            self._failed(error, quiet=True)
            return
        self.created = None
        self._written = self._handed
        self._release()

    # -- EventSink ------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        if event.event_type == "skipped" and event.node_id is not None:
            if self.history is not None and self.history.take_skip(event.node_id):
                return  # replayed: reported and recorded the first time
            self._nodes.append(
                {
                    "node_id": event.node_id,
                    "execution": self._next(event.node_id),
                    "status": "skipped",
                    "node_name": event.node_name,
                    "node_type": event.node_type,
                    "started_at": _now(),
                }
            )
            self._handed += 1
        self.sink.emit(event)
        self._events.append(event)
        self._handed += 1
        self._hand_over()

    # -- Checkpoints ----------------------------------------------------------------------

    def begin(
        self,
        node_id: str,
        activation: str,
        node: PlannedNode,
        inputs: Mapping[str, Any],
        data: Mapping[str, Any],
    ) -> Ticket:
        """`inputs` and `data` (the rendered parameters) come redacted (see
        RedactingCheckpoints): the hash and the recorded parameters hold no secret."""
        digest = input_hash(node, inputs, data)
        parameters = json_safe(data)
        match = (
            self.history.match(node_id, activation, digest) if self.history is not None else None
        )
        if match is None:
            execution = self._next(node_id)
            return Ticket(
                node_id, execution, digest, node.side_effects, None, activation, parameters
            )
        execution, prior = match
        return Ticket(
            node_id,
            execution,
            digest,
            node.side_effects,
            prior,
            activation,
            parameters,
            mismatch(prior, digest, inputs, data),
        )

    def started(self, ticket: Ticket, node: PlannedNode, inputs: Mapping[str, Any]) -> None:
        fields: dict[str, Any] = {"status": "started", "finished_at": None}
        if ticket.prior is None:  # taken up again: it keeps the time it first started
            fields.update(
                node_name=node.name,
                node_type=node.type,
                side_effects=ticket.side_effects,
                activation=ticket.activation,
                started_at=_now(),
            )
        # What it runs with now (a node taken up again may receive something else).
        fields.update(
            inputs=dict(inputs), input_hash=ticket.input_hash, parameters=ticket.parameters
        )
        self._node(ticket, **fields)

    def waiting(self, ticket: Ticket) -> None:
        self._node(ticket, status="waiting")

    def resumed(self, ticket: Ticket) -> None:
        self._node(ticket, status="started")

    def finished(
        self,
        ticket: Ticket,
        status: str,
        outputs: Mapping[str, Any] | None,
        error: Mapping[str, Any] | None,
        attempts: int,
        usage: Mapping[str, int] | None,
        state_delta: Mapping[str, Any] | None,
    ) -> None:
        self._node(
            ticket,
            status=status,
            outputs=outputs,
            error=error,
            attempts=attempts,
            usage=usage,
            state_delta=state_delta,
            finished_at=_now(),
        )

    async def barrier(self) -> None:
        if self.error is not None:
            raise self.error
        target = self._handed
        if self._written >= target:
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((target, future))
        self._write_now()
        await future

    # -- writing --------------------------------------------------------------------------

    def _node(self, ticket: Ticket, **fields: Any) -> None:
        self._nodes.append({"node_id": ticket.node_id, "execution": ticket.execution, **fields})
        self._handed += 1
        self._hand_over()

    def _next(self, node_id: str) -> int:
        last = self._executions.get(node_id)
        if last is None:
            last = self.history.last_execution(node_id) if self.history is not None else 0
        self._executions[node_id] = last + 1
        return last + 1

    def _hand_over(self) -> None:
        """Records were handed over: they go to the store within WINDOW_SECONDS (a chain
        of fast nodes is written in one write, not one per node), or at once if a
        barrier or close asks for them. No task waits while there is nothing to write:
        a write starts when needed and ends when everything handed over is written."""
        if self._timer is None and self._writer is None and not self._closing:
            self._timer = asyncio.get_running_loop().call_later(WINDOW_SECONDS, self._write_now)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _write_now(self) -> None:
        self._cancel_timer()
        if self._writer is None and self.error is None and self._pending():
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        try:
            while self._pending() and not self._detached:
                events, self._events = self._events, []
                nodes, self._nodes = self._nodes, []
                handed, created = self._handed, self.created
                try:
                    if created is None:
                        await self.store.write_batch(self.run_id, events=events, nodes=nodes)
                    else:  # the run's first write creates it
                        await self.store.write_created(created, events=events, nodes=nodes)
                except Exception as exc:
                    self._failed(exc)
                    return
                self.created = None
                self._written = handed
                self._release()
        finally:
            self._writer = None

    def _pending(self) -> bool:
        return bool(self._events or self._nodes) or self.created is not None

    def _release(self) -> None:
        still = []
        for target, future in self._waiters:
            if target <= self._written:
                if not future.done():
                    future.set_result(None)
            else:
                still.append((target, future))
        self._waiters = still

    def _failed(self, exc: BaseException, quiet: bool = False) -> None:
        self.error = exc
        for _, future in self._waiters:
            if not future.done():
                future.set_exception(exc)
        self._waiters = []
        if quiet:  # the caller's own write: the caller reports it
            return
        print(f"nodeloom: run {self.run_id} can no longer be recorded: {exc}", file=sys.stderr)
        if self.on_failure is not None:
            self.on_failure(self.run_id, exc)

    async def _beat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat)
            with contextlib.suppress(Exception):  # a missed heartbeat is not fatal
                await self.store.heartbeat(self.run_id)


def _now() -> datetime:
    return datetime.now(UTC)
