import pytest

import nodeloom
from nodeloom.nodes.core.webhook_trigger.definition import check_webhook
from nodeloom.testing.builders import chain, graph, node


def hook(**data):
    return node("h", "webhook-trigger", **{"path": "orders/new", "secret": "s", **data})


async def test_webhook_trigger_outputs_the_requests_body_headers_and_query():
    trigger = {"body": {"id": 7}, "headers": {"x-shop": "1"}, "query": {"a": "b"}}
    result = await nodeloom.load(graph(hook())).run(trigger=trigger)
    assert result.outputs["h"] == {
        "output": {"body": {"id": 7}, "headers": {"x-shop": "1"}, "query": {"a": "b"}}
    }


async def test_webhook_trigger_leaves_out_the_secret_header_whatever_its_case():
    trigger = {"body": None, "headers": {"x-token": "s", "accept": "*/*"}, "query": {}}
    result = await nodeloom.load(graph(hook(secret_header="X-Token"))).run(trigger=trigger)
    assert result.outputs["h"]["output"]["headers"] == {"accept": "*/*"}


async def test_webhook_trigger_outputs_empty_parts_when_the_run_has_no_request():
    result = await nodeloom.load(graph(hook())).run("hello")
    assert result.outputs["h"]["output"] == {"body": None, "headers": {}, "query": {}}


async def test_the_next_node_reads_the_body():
    doc = chain(hook(), node("t", "json-transform", expression="body.id * 2"))
    result = await nodeloom.load(doc).run(trigger={"body": {"id": 21}})
    assert result.outputs["t"]["output"] == 42


@pytest.mark.parametrize("path", ["orders", "orders/new", "a-b_c/D9"])
def test_a_plain_path_is_valid(path):
    assert check_webhook({"path": path}) == []


@pytest.mark.parametrize("path", ["/orders", "orders/", "a//b", "orders new", "a?b", "é", ""])
def test_a_path_with_other_characters_is_refused_naming_the_field(path):
    [(field, message)] = check_webhook({"path": path})
    assert field == "path" and "orders/new" in message


def test_a_secret_header_must_be_a_header_name():
    [(field, _)] = check_webhook({"path": "a", "secret_header": "X Token"})
    assert field == "secret_header"


def test_loading_refuses_a_bad_path_and_a_missing_secret():
    doc = graph(node("h", "webhook-trigger", path="/bad path"))
    with pytest.raises(nodeloom.GraphError) as caught:
        nodeloom.load(doc)
    fields = {(i.field, i.code) for i in caught.value.issues}
    assert fields == {("path", "invalid_parameter"), ("secret", "missing_parameter")}


def test_mode_must_be_sync_or_async():
    with pytest.raises(nodeloom.GraphError) as caught:
        nodeloom.load(graph(hook(mode="later")))
    assert [i.field for i in caught.value.issues] == ["mode"]
