"""Outputs a node takes without running as it normally would: pinned outputs, and the
executions of a recorded run (docs/durable-runs.md).

A recorded execution is found by its position (`nodeloom.engine.position`): one the record
shows finished is replayed (its outputs, usage and state changes taken again, no event
emitted again); one that had started when the run stopped runs again, after confirmation
if it has external side effects; any other runs and is recorded. A recorded execution that
received something else than on record is reported (`replay_mismatch`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from nodeloom.engine.attempt import attempt_node
from nodeloom.engine.checkpoint import snapshot_state
from nodeloom.engine.node_context import NodeContext
from nodeloom.engine.outcome import Done, Failed, Outcome, Record, Replayed
from nodeloom.engine.topology import PlannedNode
from nodeloom.errors import NodeError
from nodeloom.plugins.contract import DataValue, InputRequest


def pinned(
    node: PlannedNode, pin: dict[str, Any], inputs: dict[str, DataValue], context: NodeContext
) -> Done:
    """A pinned node: its pinned outputs, recorded as such in a recorded run."""
    started = time.perf_counter()
    outputs = dict(pin)
    run = context.context
    checkpoints = run.checkpoints
    if checkpoints is not None:
        values = {port: value.value for port, value in inputs.items()}
        activation = context.view.scope + context.delivery
        ticket = checkpoints.begin(context.node_id, activation, node, values, {"pinned": outputs})
        checkpoints.started(ticket, node, values)
        checkpoints.finished(ticket, "completed", outputs, None, 0, None, None)
    run.events.emit("started", None, context.node_id, node.name, node.type)
    return Done(outputs, None, started, context.delivery, pinned=True)


async def recorded(
    node: PlannedNode,
    inputs: dict[str, DataValue],
    data: dict[str, Any],
    resolve_error: Exception | None,
    context: NodeContext,
) -> Outcome:
    """A node of a recorded run: replayed if on record as finished, else run (again)
    between its checkpoint hooks. `resolve_error`: its parameters could not be resolved
    (it is recorded, then fails)."""
    run, state = context.context, context.run_state
    checkpoints = run.checkpoints
    assert checkpoints is not None
    emit, node_id, delivery = run.events.emit, context.node_id, context.delivery
    started = time.perf_counter()
    values = {port: value.value for port, value in inputs.items()}
    ticket = checkpoints.begin(node_id, context.view.scope + delivery, node, values, data)
    prior = ticket.prior
    if ticket.mismatch is not None:  # found at its position, but received something else
        mismatch = {"execution": ticket.execution, "status": prior and prior.status}
        mismatch.update(ticket.mismatch, replayed=bool(prior and prior.done))
        emit("replay_mismatch", mismatch, node_id, node.name, node.type)
    if prior is not None and prior.done:
        return Replayed(prior, delivery)
    in_flight = prior is not None  # it had started when the run stopped
    if not (in_flight and prior.status == "waiting"):
        emit("started", None, node_id, node.name, node.type)
    else:
        context.quiet_wait = True  # its `started` and `waiting` are on record already
    checkpoints.started(ticket, node, values)
    context.ticket = ticket
    record = Record(ticket, snapshot_state(state.shared, state.result))
    attempts = 1
    try:
        if resolve_error is not None:
            raise resolve_error
        if ticket.side_effects == "external":
            if in_flight:
                await confirm_external(node, context)
            await checkpoints.barrier()
        outputs, usage, attempts = await attempt_node(node, data, inputs, context, emit)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        return Failed(exc, attempts, started, delivery, record)
    return Done(outputs, usage, started, delivery, attempts, record)


async def confirm_external(node: PlannedNode, context: NodeContext) -> None:
    """An external node had started when its run stopped: it may have acted already.
    Run it again only if the user said so (--replay-external, or approving here)."""
    continuation = context.context.continuation
    if continuation is not None and continuation.replay_external:
        return
    answer = await context.wait_for_input(
        InputRequest(
            kind="approval",
            prompt=f"'{node.name}' has external side effects and was running when the "
            "run stopped: it may have acted already. Approve to run it again, reject to "
            "fail it.",
            value={"reason": "external_interrupted"},
        )
    )
    if answer.get("decision") != "approve":
        raise NodeError(
            "not run again after the interruption (rejected); it may or may not have "
            "acted. Re-run from this node once you have checked",
            code="external_not_replayed",
            retryable=False,
        )
