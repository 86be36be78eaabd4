"""A person's deadline, shared by the nodes that wait for one (Approval, Human Input):
the `timeout`, `on_timeout` and `timeout_answer` parameters, the `timeout` port present
only when `on_timeout` is `port`, and the error of `on_timeout: fail`."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.graph.definitions import Port
from nodeloom.plugins.definition import Parameter

ON_TIMEOUT = ("fail", "answer", "port")


def timeout_parameters(answer: Parameter) -> tuple[Parameter, ...]:
    """`timeout`, `on_timeout` and `answer` (the node's `timeout_answer`)."""
    return (
        Parameter(
            "timeout",
            "number",
            "Answer within (s)",
            minimum=0,
            description="Seconds a person has to answer; empty: no limit. Counted while the "
            "run is paused too: the server's timer service wakes it (docs/automations.md).",
        ),
        Parameter(
            "on_timeout",
            "enum",
            "On timeout",
            default="fail",
            options=ON_TIMEOUT,
            description="fail: the node fails (`input_timeout`); answer: go on with "
            "`timeout_answer`; port: the input goes out on the `timeout` port.",
        ),
        answer,
    )


def timeout_port(description: str) -> Port:
    return Port(
        "timeout",
        label="Timeout",
        description=description + " Present when `on_timeout` is `port`.",
        when=("on_timeout", "port"),
    )


def check_timeout(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    timeout = data.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
    ):
        return [("timeout", f"timeout is a number of seconds above 0, got {timeout!r}")]
    if data.get("on_timeout", "fail") not in ON_TIMEOUT:
        return [("on_timeout", f"on_timeout is one of {', '.join(ON_TIMEOUT)}")]
    return []


def wake_at(data: Mapping[str, Any]) -> float | None:
    """The deadline (epoch seconds) of a wait starting now, or None without `timeout`."""
    timeout = data.get("timeout")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        return None
    return time.time() + float(timeout)


def timed_out(node_type: str, node_name: str, node_id: str, timeout: Any) -> NodeError:
    """The error of `on_timeout: fail`."""
    return NodeError(
        f"{node_type} '{node_name}' (id '{node_id}'): nobody answered within its `timeout` "
        f"of {timeout} s and `on_timeout` is fail. Set on_timeout to `answer` (with "
        "`timeout_answer`) or `port` to go on without an answer, or raise `timeout`.",
        code="input_timeout",
        retryable=False,
        details={"field": "timeout"},
    )


__all__ = ["ON_TIMEOUT", "check_timeout", "timed_out", "timeout_parameters", "timeout_port"]
