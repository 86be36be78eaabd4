"""Expression references: every node an expression names exists and runs before it, every
`$name` it uses is available there, and `$json` has an input to read."""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from nodeloom.errors import Issue
from nodeloom.graph.checked import NodeInfo
from nodeloom.graph.model import Graph
from nodeloom.graph.ordering import AncestorBits
from nodeloom.graph.structure import Structure


def check_references(
    graph: Graph,
    infos: dict[str, NodeInfo],
    order: list[str],
    prefix: str,
    outer_names: Mapping[str, str],
    extra_roots: frozenset[str],
    structure: Structure,
    issues: list[Issue],
) -> None:
    referencing = [i for i in infos.values() if i.templates]
    if not referencing:
        return
    names: dict[str, str] = {}
    for node in graph.nodes:
        names[node.id] = node.id
        names[node.name] = node.id
    has_input = {edge.target for edge in graph.edges}
    ancestors = AncestorBits(graph, order, structure)
    for info in referencing:
        for field_name, template in info.templates.items():
            for ref in sorted(template.references):
                target = names.get(ref)
                if target is None:
                    if ref in outer_names:
                        continue
                    choices = list(names) + list(outer_names)
                    hint = difflib.get_close_matches(ref, choices, n=1)
                    suggestion = f"; did you mean '{hint[0]}'?" if hint else ""
                    issues.append(
                        Issue(
                            "expression_unknown_node",
                            f"{template.source!r} refers to node '{ref}', which is not in the "
                            f"graph{suggestion}",
                            node_id=prefix + info.node.id,
                            field=field_name,
                        )
                    )
                elif target == info.node.id or not ancestors.is_ancestor(target, info.node.id):
                    issues.append(
                        Issue(
                            "expression_not_upstream",
                            f"{template.source!r} refers to node '{ref}', which is not upstream "
                            f"of '{info.node.name}'; an expression can read only nodes that run "
                            "before it (connect them with an edge)",
                            node_id=prefix + info.node.id,
                            field=field_name,
                        )
                    )
            parameter = (
                info.definition.parameter(field_name.split(".")[0].split("[")[0])
                if info.definition
                else None
            )
            deferred = parameter is not None and parameter.type == "expression"
            unknown_roots = (
                template.roots - _ROOTS - extra_roots - (_DEFERRED if deferred else frozenset())
            )
            for root in sorted(unknown_roots):
                issues.append(
                    Issue(
                        "expression_unknown_name",
                        f"{template.source!r} uses '{root}', which is not available here"
                        + (" ($loop exists only inside a Loop body)" if root == "$loop" else ""),
                        node_id=prefix + info.node.id,
                        field=field_name,
                    )
                )
            if (
                template.uses_input
                and info.node.id not in has_input
                and not extra_roots
                and not deferred
            ):
                issues.append(
                    Issue(
                        "expression_no_input",
                        f"{template.source!r} reads $json, but nothing is wired into "
                        f"'{info.node.name}'; connect a node to its input or use $('Node')",
                        node_id=prefix + info.node.id,
                        field=field_name,
                    )
                )


_ROOTS = frozenset({"$json", "input", "$trigger", "$vars", "$run", "$credentials", "$"})
# A parameter the executor evaluates itself (Loop's `until`) also sees $loop.
_DEFERRED = frozenset({"$loop"})
