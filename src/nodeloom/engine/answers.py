"""Answers given ahead of time (`--respond`, an API resume's `answers`), checked against
what each answered node will ask before any node runs: an answer that cannot fit (`maybe`
for an approval) is invalid input, not a failed run after tokens were spent.

A node declares what it asks through its definition's `asks` hook, from its static
parameters; a node that asks something only its run can tell (fields set by an expression)
is not checked here, and its answer is checked when it waits, as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nodeloom.conditions import preview
from nodeloom.engine.human import AnswerError, accepted_forms, normalize_answer
from nodeloom.engine.topology import FlowPlan, PlannedNode
from nodeloom.errors import Issue


def check_answers(plan: FlowPlan, answers: Mapping[str, Any]) -> list[Issue]:
    """An `invalid_answer` issue per answer that does not fit its node, naming the node,
    the answer and the accepted forms; an `unknown_node` issue per answer to no node of the
    graph (a typo would otherwise leave the run paused after its tokens were spent)."""
    issues: list[Issue] = []
    for ref, given in answers.items():
        node = _find(plan, ref)
        if not answered_node(plan, ref):
            issues.append(_unknown(plan, ref))
            continue
        if node is None or node.definition.asks is None:
            continue
        dynamic = {parameter.id for parameter in node.dynamic}
        known = {key: value for key, value in node.static.items() if key not in dynamic}
        request = node.definition.asks(known)
        if request is None:
            continue
        for answer in given if isinstance(given, list) else [given]:
            try:
                normalize_answer(request, answer)
            except AnswerError as exc:
                accepted = accepted_forms(request)
                reason = str(exc) if accepted in str(exc) else f"{exc}; it accepts {accepted}"
                issues.append(
                    Issue(
                        "invalid_answer",
                        f"the answer {preview(answer)} given ahead of time to '{node.name}' "
                        f"({node.type}, id '{node.id}') does not fit: {reason}",
                        node_id=node.id,
                        field="answer",
                    )
                )
    return issues


def answered_node(plan: FlowPlan, ref: str) -> bool:
    """Whether `ref` (an id or name, or `Node/...` inside a node) answers a node of `plan`."""
    return _find(plan, ref) is not None or _find(plan, ref.split("/")[0]) is not None


def _unknown(plan: FlowPlan, ref: str) -> Issue:
    askers = sorted(
        {
            node.name
            for candidate in _plans(plan)
            for node in candidate.nodes
            if node.definition.interactive
        }
    )
    return Issue(
        "unknown_node",
        f"an answer is given to '{ref}', which is not a node of the graph; the nodes that "
        f"may wait for an answer: {', '.join(askers) or 'none'}",
        node_id=ref,
        field="answer",
    )


def _find(plan: FlowPlan, ref: str) -> PlannedNode | None:
    for candidate in _plans(plan):
        index = candidate.names.get(ref)
        if index is not None:
            return candidate.nodes[index]
    return None


def _plans(plan: FlowPlan) -> Iterator[FlowPlan]:
    """The plan, then the plans of its nodes' inner graphs (a Loop's body), depth first."""
    yield plan
    for node in plan.nodes:
        for body in node.bodies.values():
            yield from _plans(body)


__all__ = ["answered_node", "check_answers"]
