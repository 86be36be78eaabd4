"""The position of a node execution names it by what started it, not by when."""

from nodeloom.engine.position import KEY_LIMIT, body_scope, delivery_key


def test_a_delivery_is_named_by_its_sender_and_nests_through_chains_of_each_nodes():
    first = delivery_key("a", "output", "input", "")
    assert first == "<a.output:input>"
    assert delivery_key("b", "output", "input", first) == "<b.output:input<a.output:input>>"
    assert delivery_key("a", "output", "other", "") != first  # another edge, another delivery


def test_a_long_chain_of_deliveries_is_replaced_by_a_digest_that_stays_distinct():
    key = ""
    seen = set()
    for _ in range(100):  # a cycle of each-nodes going round
        key = delivery_key("a", "output", "input", key)
        assert len(key) <= KEY_LIMIT and key not in seen
        seen.add(key)
    assert "<#" in key
    again = ""
    for _ in range(100):
        again = delivery_key("a", "output", "input", again)
    assert again == key


def test_a_loop_iteration_scope_follows_the_loop_execution_s_position():
    assert body_scope("", "body", 2) == "[2]"
    assert body_scope("[1]", "body", 2) == "[1][2]"
    assert body_scope("<a.output:input>", "graph", 0) == "<a.output:input>[graph:0]"
