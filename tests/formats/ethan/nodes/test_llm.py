"""ethan-llm: prompts rendered with partials, one call to the mock LLM over real HTTP."""

from __future__ import annotations

GRAPH = """
    meta:
      defaults: {llm: "openai:gpt-4o-mini", temp: 0.1}
    state:
      shape: {question: str, answer: "str | null", parsed: "dict | null"}
    prompts:
      partials:
        system/base: "You are terse. {{> rules }}"
        rules: "Answer in one line."
      templates:
        qa:
          system: "{{> system/base }}"
          assistant: "Previously: nothing."
          user: "Q: {{ question }}"
          messages:
            - {role: user, content: "Context for {{ state.question }}"}
    graph:
      inputs: [question]
      outputs: [answer]
      nodes:
        - id: ask
          type: llm
          prompt: qa
          EXTRA
          map:
            set:
              answer: "{{ result.text }}"
              parsed: >-
                {{ result.json if result.json is mapping and 'model' not in result.json
                   else none }}
"""


def text(extra: str = "") -> str:
    return GRAPH.replace("EXTRA", extra)


async def test_the_prompt_is_rendered_with_partials_in_conversation_order(ethan, mock_llm):
    mock_llm.script([{"reply": "Because."}])
    result, events = await ethan.run(text(), {"question": "why?"})
    assert result.status == "completed", result.error
    assert result.state["answer"] == "Because."
    request = mock_llm.requests[0]
    assert [(m["role"], m["content"]) for m in request.messages] == [
        ("developer", "You are terse. Answer in one line."),
        ("user", "Context for why?"),
        ("assistant", "Previously: nothing."),
        ("user", "Q: why?"),
    ]
    assert request.body["temperature"] == 0.1
    completed = next(e for e in events if e.event_type == "completed" and e.node_id == "ask")
    assert completed.data["usage"]["total_tokens"] > 0
    assert result.usage["total_tokens"] == completed.data["usage"]["total_tokens"]


async def test_a_json_reply_is_parsed(ethan, mock_llm):
    mock_llm.script([{"json": {"verdict": "yes"}}])
    result, _ = await ethan.run(text(), {"question": "why?"})
    assert result.state["parsed"] == {"verdict": "yes"}
    assert result.outputs["ask"]["result"]["usage"]["prompt_tokens"] > 0


async def test_a_provider_error_names_the_node_and_its_prompt(ethan, mock_llm):
    mock_llm.script([{"error": {"status": 400, "message": "bad request"}}])
    result, _ = await ethan.run(text(), {"question": "why?"})
    assert result.status == "failed"
    assert result.error["node_id"] == "ask"
    assert result.error["node_type"] == "ethan-llm"
    assert result.error["prompt"] == "qa"
    assert "llm node 'ask' (prompt 'qa'):" in result.error["message"]
    assert "bad request" in result.error["message"]
    assert len(mock_llm.requests) == 1  # no retry policy, and the client's own retries are off


async def test_the_timeout_is_enforced(ethan, mock_llm):
    mock_llm.script([{"reply": "late", "delay": 2}])
    result, _ = await ethan.run(text("timeout: {seconds: 0.3}"), {"question": "why?"})
    assert result.status == "failed"
    assert result.error["code"] == "node_timeout"
    assert result.error["node_id"] == "ask"


async def test_a_model_without_a_key_fails_before_any_call(ethan, mock_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    result, events = await ethan.run(text(), {"question": "why?"})
    assert result.status == "failed"
    assert result.error["code"] == "model_not_configured"
    assert mock_llm.requests == []
    assert not [e for e in events if e.event_type == "started"]


async def test_a_provider_with_an_env_base_url(ethan, mock_llm, monkeypatch):
    monkeypatch.setenv("MY_LLM_URL", mock_llm.base_url)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("NODELOOM_ALLOW_PRIVATE_NETWORK", "1")  # a graph's URL on loopback
    mock_llm.script([{"match": {"model": "local-model"}, "reply": "local"}])
    graph = text().replace(
        'defaults: {llm: "openai:gpt-4o-mini", temp: 0.1}',
        'defaults: {llm: "local:local-model"}\n'
        "      providers:\n"
        '        local: {type: openai_compatible, base_url: "{{env.MY_LLM_URL}}", max_tokens: 50}',
    )
    result, _ = await ethan.run(graph, {"question": "why?"})
    assert result.status == "completed", result.error
    assert result.state["answer"] == "local"
    assert mock_llm.requests[0].body["max_tokens"] == 50


async def test_an_unset_env_placeholder_fails_before_any_call(ethan, mock_llm):
    graph = text().replace(
        'defaults: {llm: "openai:gpt-4o-mini", temp: 0.1}',
        'defaults: {llm: "local:m"}\n'
        "      providers:\n"
        '        local: {type: openai_compatible, base_url: "{{env.NOT_SET_ANYWHERE}}"}',
    )
    result, _ = await ethan.run(graph, {"question": "why?"})
    assert result.status == "failed"
    assert "NOT_SET_ANYWHERE is not set" in result.error["message"]
    assert mock_llm.requests == []
