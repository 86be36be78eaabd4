"""The legacy rules of seed 002: input is approval, condition is conditions, true is
condition-0 (and the removed `end` node is left out)."""

from nodeloom.formats import read_graph


def native(document):
    return read_graph(document)[0]


def by_id(graph):
    return {n["id"]: n for n in graph["nodes"]}


def test_a_node_of_type_input_is_an_approval(wf):
    graph = native(
        wf.doc(wf.start(), {**wf.approval("ok"), "type": "input"}, wf.link("start", "ok"))
    )
    assert by_id(graph)["ok"]["type"] == "approval"


def test_a_legacy_condition_is_one_contains_condition(wf):
    graph = native(
        wf.doc(wf.start(), wf.if_node("check", condition="Refund"), wf.link("start", "check"))
    )
    assert by_id(graph)["check"]["data"]["conditions"] == [
        {"operator": "contains", "value": "Refund"}
    ]


def test_non_empty_conditions_win_over_a_legacy_condition(wf):
    check = wf.if_node("check", ("equal", "yes"), condition="ignored")
    graph = native(wf.doc(wf.start(), check, wf.link("start", "check")))
    assert by_id(graph)["check"]["data"]["conditions"] == [{"operator": "equal", "value": "yes"}]


def test_an_if_without_conditions_gets_one_that_never_holds(wf):
    graph = native(wf.doc(wf.start(), wf.if_node("check"), wf.link("start", "check")))
    assert by_id(graph)["check"]["data"]["conditions"] == [{"operator": "contains", "value": ""}]


def test_the_legacy_true_handle_is_condition_0(wf):
    graph = native(
        wf.doc(
            wf.start(),
            wf.if_node("check", condition="yes"),
            wf.agent("a"),
            wf.link("start", "check"),
            wf.link("check", "a", "true"),
        )
    )
    [edge] = [e for e in graph["edges"] if e["source"] == "check"]
    assert edge["sourceHandle"] == "condition-0"


def test_end_nodes_of_the_old_editor_are_left_out_with_their_connections(wf):
    end = {"id": "end", "type": "end", "x": 0, "y": 0}
    document = wf.doc(wf.start(), wf.agent("a"), end, wf.link("start", "a"), wf.link("a", "end"))
    graph = native(document)
    assert set(by_id(graph)) == {"start", "a"}
    assert all("end" not in (e["source"], e["target"]) for e in graph["edges"])
