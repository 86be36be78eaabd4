"""Ethan Start: the entry of a converted Ethan graph (not written in the YAML)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from nodeloom.formats.ethan.catalogue import RESULT, ROUTE, ROUTES, check_spec, spec_parameter
from nodeloom.plugins.contract import NodeDefinition


def missing_inputs(declared: list[str], trigger: Any) -> list[str]:
    """The declared inputs (`graph.inputs`) the run's trigger (`{"inputs": {...}}`, from
    `--inputs`) does not give. Pure: the start node uses it, and a trigger check before
    the run could too."""
    given = trigger.get("inputs") if isinstance(trigger, Mapping) else None
    given = given if isinstance(given, Mapping) else {}
    return [name for name in declared if name not in given]


def check_trigger(data: Mapping[str, Any], trigger: Any) -> list[tuple[str, str, str]]:
    """Before the run: every input graph.inputs declares is given (`--inputs`)."""
    try:
        spec = json.loads(data.get("spec") or "{}")
    except ValueError:
        return []  # the definition's check reports a broken spec
    declared = spec.get("inputs") or [] if isinstance(spec, dict) else []
    given = trigger.get("inputs") if isinstance(trigger, Mapping) else None
    if given is not None and not isinstance(given, Mapping):
        return [
            (
                "invalid_input",
                "graph.inputs",
                f"the run's inputs must be an object of name -> value, got {type(given).__name__}",
            )
        ]
    missing = missing_inputs(declared, trigger)
    if not missing:
        return []
    names = ", ".join(f"'{name}'" for name in missing)
    example = ", ".join(f'"{name}": ...' for name in missing)
    plural = len(missing) > 1
    return [
        (
            "missing_input",
            "graph.inputs",
            f"missing required input{'s' if plural else ''} {names} (graph.inputs: "
            f"{', '.join(declared)}); pass {'them' if plural else 'it'} with --inputs "
            f"'{{{example}}}'",
        )
    ]


definition = NodeDefinition(
    id="ethan-start",
    name="Ethan Start",
    category="formats",
    description="Starts a converted Ethan graph: checks the run's inputs against "
    "graph.inputs, builds the state (state.init, the shape's keys, the inputs) and "
    "routes to the graph's entry nodes.",
    icon="Play",
    inputs=(),
    outputs=(RESULT, ROUTE),
    parameters=(
        spec_parameter(
            'The graph\'s start: {"inputs", "outputs", "state": {"init", "shape", '
            '"reducer"}, "timeout", "routes"}.'
        ),
        ROUTES,
    ),
    side_effects="pure",
    trigger=True,
    check=check_spec,
    check_trigger=check_trigger,
)
