import nodeloom
from nodeloom import RunStatus
from nodeloom.testing.builders import chain, edge, graph, node
from nodeloom.testing.events import of_type


def flow(**data):
    return nodeloom.load(chain(node("start", "chat-start"), node("llm", "llm-completion", **data)))


async def test_the_prompt_defaults_to_the_spine_input_and_the_reply_is_the_text(mock_llm):
    mock_llm.script([{"match": {"last_message": {"equals": "hello"}}, "reply": "hi there"}])
    result = await flow().run("hello")
    assert result.status is RunStatus.COMPLETED
    output = result.outputs["llm"]["output"]
    assert output["text"] == "hi there" and output["model"] == "openai:gpt-4o-mini"
    assert [m["role"] for m in mock_llm.requests[0].messages] == ["user"]


async def test_tokens_stream_as_progress_events_in_order(mock_llm):
    mock_llm.script([{"reply": "one two three four"}])
    sink = nodeloom.ListSink()
    await flow().run("x", sink=sink)
    tokens = [e.data["token"] for e in of_type(sink.events, "progress", "llm")]
    assert len(tokens) == 4 and "".join(tokens) == "one two three four"
    completed = of_type(sink.events, "completed", "llm")[0]
    assert completed.seq > of_type(sink.events, "progress", "llm")[-1].seq


async def test_usage_is_reported_on_the_node_and_summed_over_the_run(mock_llm):
    mock_llm.script([{"reply": "a b c"}])
    doc = graph(
        node("start", "chat-start"),
        node("one", "llm-completion"),
        node("two", "llm-completion"),
        edge("start", "one"),
        edge("start", "two"),
    )
    sink = nodeloom.ListSink()
    result = await nodeloom.load(doc).run("count these words", sink=sink)
    per_node = [e.data["usage"] for e in of_type(sink.events, "completed") if "usage" in e.data]
    assert len(per_node) == 2 and per_node[0]["completion_tokens"] == 3
    assert result.usage["total_tokens"] == sum(u["total_tokens"] for u in per_node)
    assert of_type(sink.events, "run_completed")[0].data["usage"] == result.usage


async def test_system_prompt_template_and_parameters_reach_the_model(mock_llm):
    mock_llm.script([{"reply": "ok"}])
    doc = chain(
        node("start", "chat-start"),
        node(
            "llm",
            "llm-completion",
            system="You are {{ $vars.persona }}.",
            prompt="Say {{ $json.message }}",
            temperature=0.2,
            max_tokens=50,
        ),
    )
    doc["variables"] = {"persona": "a pirate"}
    await nodeloom.load(doc).run("cheese")
    request = mock_llm.requests[0]
    # Agno sends OpenAI's system prompt in the newer "developer" role.
    assert request.messages[0]["role"] in ("system", "developer")
    assert request.messages[0]["content"] == "You are a pirate."
    assert request.messages[-1] == {"role": "user", "content": "Say cheese"}
    assert request.body["temperature"] == 0.2
    assert request.body.get("max_tokens", request.body.get("max_completion_tokens")) == 50


async def test_a_model_selector_wire_sets_the_model(mock_llm):
    mock_llm.script([{"match": {"model": "picked-model"}, "reply": "from picked"}])
    doc = graph(
        node("start", "chat-start"),
        node("sel", "model-selector", model="openai:picked-model"),
        node("llm", "llm-completion"),
        edge("start", "llm"),
        edge("sel", "llm", "model", "model"),
    )
    result = await nodeloom.load(doc).run("hi")
    assert result.outputs["llm"]["output"] == {
        "text": "from picked",
        "usage": result.outputs["llm"]["output"]["usage"],
        "model": "openai:picked-model",
    }


async def test_a_base_url_on_the_node_overrides_the_environment(mock_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("NODELOOM_ALLOW_PRIVATE_NETWORK", "1")  # the mock is on loopback
    mock_llm.script([{"reply": "via node base_url"}])
    result = await flow(base_url=mock_llm.base_url, api_key="node-key").run("hi")
    assert result.outputs["llm"]["output"]["text"] == "via node base_url"


async def test_a_node_base_url_elsewhere_never_receives_the_environment_key(mock_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("NODELOOM_ALLOW_PRIVATE_NETWORK", "1")
    result = await flow(name="Leaky", base_url=mock_llm.base_url).run("hi")
    assert result.status is RunStatus.FAILED and mock_llm.requests == []
    message = result.error["message"]
    assert "OPENAI_API_KEY" in message and "$credentials" in message


async def test_a_node_base_url_on_a_private_network_is_refused(mock_llm, monkeypatch):
    monkeypatch.delenv("NODELOOM_ALLOW_PRIVATE_NETWORK", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    result = await flow(base_url=mock_llm.base_url, api_key="node-key").run("hi")
    assert result.status is RunStatus.FAILED and mock_llm.requests == []
    assert result.error["code"] == "ssrf_blocked", result.error
    assert "NODELOOM_ALLOW_PRIVATE_NETWORK" in result.error["message"]


async def test_an_unconfigured_provider_fails_before_any_call_naming_node_and_fix(
    mock_llm, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY")
    sink = nodeloom.ListSink()
    result = await flow(name="Writer").run("hi", sink=sink)
    assert result.status is RunStatus.FAILED
    assert result.error["code"] == "model_not_configured"
    assert "'Writer'" in result.error["message"] and "OPENAI_API_KEY" in result.error["message"]
    assert mock_llm.requests == []
    assert not of_type(sink.events, "started")


async def test_a_provider_error_fails_the_node_and_is_retryable(mock_llm):
    mock_llm.script(
        [{"error": {"status": 500, "message": "boom"}, "times": 1}, {"reply": "second time lucky"}]
    )
    result = await flow(retry={"max_attempts": 2, "initial_interval": 0.01}).run("hi")
    assert result.status is RunStatus.COMPLETED
    assert result.outputs["llm"]["output"]["text"] == "second time lucky"
