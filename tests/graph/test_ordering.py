"""One ancestors walk, shared by validation (a Loop body's visible nodes) and the run plan."""

import nodeloom
from nodeloom.graph.document import parse_graph
from nodeloom.graph.ordering import ancestors, upstream_of
from nodeloom.plugins.registry import Registry
from nodeloom.testing.builders import edge, graph, node


def test_ancestors_are_every_node_with_a_path_to_the_start():
    predecessors = {"d": ["b", "c"], "b": ["a"], "c": ["a"]}
    assert ancestors("d", lambda n: predecessors.get(n, [])) == {"a", "b", "c"}
    assert ancestors("a", lambda n: predecessors.get(n, [])) == set()


def test_a_node_is_its_own_ancestor_only_on_a_cycle():
    predecessors = {"a": ["c"], "b": ["a"], "c": ["b"], "x": ["a"]}
    assert ancestors("a", predecessors.__getitem__) == {"a", "b", "c"}
    assert "x" not in ancestors("x", predecessors.__getitem__)


def test_the_run_plan_and_validation_agree_on_ancestors_and_descendants():
    doc = graph(
        node("s", "chat-start"),
        node("a", "prompt-template", template="a"),
        node("b", "prompt-template", template="b"),
        node("c", "prompt-template", template="c"),
        edge("s", "a"),
        edge("a", "b"),
        edge("s", "c"),
    )
    registry = Registry.discover(use_entry_points=False, use_environment=False)
    plan = nodeloom.load(doc, registry=registry).plan
    parsed, _ = parse_graph(doc)
    for planned in plan.nodes:
        from_plan = {plan.nodes[i].id for i in plan.ancestors(planned.index)}
        assert from_plan == upstream_of(parsed, planned.id)
    assert {plan.nodes[i].id for i in plan.descendants(plan.names["s"])} == {"a", "b", "c"}
