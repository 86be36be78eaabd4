"""Where a node execution stands in its run: a string (its `activation`) that, with the
node id, names the execution the same way in every process however concurrent branches
interleave. A resumed run finds an execution's record by it (docs/durable-runs.md).

- a joining node runs once per graph run: its activation is the graph run's scope;
- a Loop body's scope is the Loop execution's activation followed by `[iteration]`;
- an each-node's activation is its scope followed by the delivery that started it, named by
  the sender (node, ports, and the sender's own delivery), not by arrival order.
"""

from __future__ import annotations

import hashlib

KEY_LIMIT = 160


def delivery_key(source: str, source_port: str, target_port: str, source_delivery: str) -> str:
    """The position of an each-node's execution within its scope: the delivery that
    started it, named by the edge it came on and the position of the execution that sent
    it (its own delivery, for an each-node source). It does not depend on the order in
    which concurrent branches delivered. Long chains (cycles of each-nodes) are hashed."""
    key = f"<{source}.{source_port}:{target_port}{source_delivery}>"
    if len(key) <= KEY_LIMIT:
        return key
    return "<#" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ">"


def body_scope(activation: str, parameter: str, iteration: int) -> str:
    """The scope of one run of a node's inner graph (a Loop iteration): the position of
    the node's execution, then the iteration (and the body's parameter unless `body`)."""
    where = str(iteration) if parameter == "body" else f"{parameter}:{iteration}"
    return f"{activation}[{where}]"
