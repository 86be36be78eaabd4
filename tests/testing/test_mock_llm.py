"""The mock LLM over real HTTP: with httpx, and with the official openai client."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any, Literal

import httpx
import jsonschema
import openai
import pytest
from openai import AsyncOpenAI
from pydantic import BaseModel

from nodeloom.testing.mock_llm import MockLLM, Rule, ScriptError

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1},
            },
            "required": ["city", "unit", "days"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
}


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def post(llm: MockLLM, **body: Any) -> httpx.Response:
    body.setdefault("model", "gpt-4o-mini")
    return httpx.post(f"{llm.base_url}/chat/completions", json=body, timeout=10)


def events(response: httpx.Response) -> list[Any]:
    """The `data:` payloads of an SSE body, parsed ("[DONE]" kept as text)."""
    lines = [line for line in response.text.split("\n\n") if line]
    assert all(line.startswith("data: ") for line in lines), response.text
    return [line[6:] if line == "data: [DONE]" else json.loads(line[6:]) for line in lines]


def client(llm: MockLLM, **options: Any) -> AsyncOpenAI:
    options.setdefault("max_retries", 0)
    return AsyncOpenAI(base_url=llm.base_url, api_key="test", **options)


# --- the wire format ----------------------------------------------------------------------


def test_zero_config_echoes_the_last_user_message_in_the_openai_format(mock_llm):
    response = post(
        mock_llm,
        model="some-model",
        messages=[{"role": "system", "content": "Be brief."}, user("hello there")],
    )

    assert response.status_code == 200
    body = response.json()
    assert body["id"].startswith("chatcmpl-")
    assert body["object"] == "chat.completion"
    assert isinstance(body["created"], int)
    assert body["model"] == "some-model"
    (choice,) = body["choices"]
    assert choice["message"] == {
        "role": "assistant",
        "content": "mock reply to: hello there",
        "refusal": None,
    }
    assert choice["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 4, "completion_tokens": 5, "total_tokens": 9}


def test_a_stream_sends_one_chunk_per_word_then_the_finish_and_done(mock_llm):
    mock_llm.script([{"reply": "one two  three"}])

    payloads = events(post(mock_llm, messages=[user("hi")], stream=True))

    assert payloads[-1] == "[DONE]"
    chunks = payloads[:-1]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    assert all("usage" not in c for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas[0] == {"role": "assistant", "content": ""}
    assert [d["content"] for d in deltas[1:-1]] == ["one ", "two  ", "three"]
    assert deltas[-1] == {}
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_include_usage_adds_a_final_usage_chunk(mock_llm):
    mock_llm.script([{"reply": "four words right here"}])

    payloads = events(
        post(
            mock_llm,
            messages=[user("count these three")],
            stream=True,
            stream_options={"include_usage": True},
        )
    )

    usage_chunk = payloads[-2]
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"] == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    assert all(c["usage"] is None for c in payloads[:-2])


async def test_the_openai_client_parses_a_scripted_reply():
    async with MockLLM([{"reply": "Paris."}]) as llm, client(llm) as openai_client:
        completion = await openai_client.chat.completions.create(
            model="gpt-4o-mini", messages=[user("Capital of France?")]
        )

    assert completion.choices[0].message.content == "Paris."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "gpt-4o-mini"
    assert completion.usage is not None
    assert completion.usage.total_tokens == 4


async def test_the_openai_client_streams_the_tokens_in_order(mock_llm):
    mock_llm.script([{"reply": "The quick brown fox jumps."}])

    async with client(mock_llm) as openai_client:
        stream = await openai_client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[user("go")],
            stream=True,
            stream_options={"include_usage": True},
        )
        received = [chunk async for chunk in stream]

    tokens = [c.choices[0].delta.content for c in received if c.choices and c.choices[0].delta]
    assert [t for t in tokens if t] == ["The ", "quick ", "brown ", "fox ", "jumps."]
    assert received[-1].usage is not None
    assert received[-1].usage.completion_tokens == 5


async def test_the_openai_client_receives_parallel_tool_calls(mock_llm):
    mock_llm.script(
        [
            {
                "tool_calls": [
                    {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
                    {"name": "get_time", "arguments": {}},
                ]
            }
        ]
    )

    async with client(mock_llm) as openai_client:
        completion = await openai_client.chat.completions.create(
            model="gpt-4o-mini", messages=[user("weather and time?")], tools=[WEATHER_TOOL]
        )

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    calls = choice.message.tool_calls
    assert [c.function.name for c in calls] == ["get_weather", "get_time"]
    assert json.loads(calls[0].function.arguments) == {"city": "Paris", "unit": "celsius"}
    assert json.loads(calls[1].function.arguments) == {}
    assert len({c.id for c in calls}) == 2
    assert {c.type for c in calls} == {"function"}


async def test_streamed_tool_calls_come_as_a_start_then_argument_fragments(mock_llm):
    arguments = {"city": "New York", "unit": "fahrenheit", "days": 3}
    mock_llm.script([{"tool_calls": [{"name": "get_weather", "arguments": arguments}]}])

    async with client(mock_llm) as openai_client:
        stream = await openai_client.chat.completions.create(
            model="gpt-4o-mini", messages=[user("weather?")], tools=[WEATHER_TOOL], stream=True
        )
        deltas = [c.choices[0] async for c in stream]

    parts = [d.delta.tool_calls[0] for d in deltas if d.delta.tool_calls]
    first, fragments = parts[0], parts[1:]
    assert first.id is not None
    assert first.function.name == "get_weather"
    assert first.function.arguments == ""
    assert len(fragments) > 1
    assert all(f.id is None and f.index == 0 for f in fragments)
    assert json.loads("".join(f.function.arguments for f in fragments)) == arguments
    assert deltas[-1].finish_reason == "tool_calls"


# --- zero-config --------------------------------------------------------------------------


def test_zero_config_calls_the_first_tool_with_arguments_valid_for_its_schema(mock_llm):
    body = post(mock_llm, messages=[user("weather?")], tools=[WEATHER_TOOL, TIME_TOOL]).json()

    (call,) = body["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    arguments = json.loads(call["function"]["arguments"])
    assert arguments == {"city": "example", "unit": "celsius", "days": 1}
    jsonschema.validate(arguments, WEATHER_TOOL["function"]["parameters"])
    assert body["choices"][0]["finish_reason"] == "tool_calls"


def test_zero_config_follows_tool_choice(mock_llm):
    named = {"type": "function", "function": {"name": "get_time"}}
    tools = [WEATHER_TOOL, TIME_TOOL]

    chosen = post(mock_llm, messages=[user("x")], tools=tools, tool_choice=named).json()
    refused = post(mock_llm, messages=[user("x")], tools=tools, tool_choice="none").json()

    assert chosen["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_time"
    assert refused["choices"][0]["message"]["content"] == "mock reply to: x"


def test_zero_config_replies_once_the_tool_result_is_in(mock_llm):
    messages = [
        user("weather in Oslo?"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "rainy"},
    ]

    body = post(mock_llm, messages=messages, tools=[WEATHER_TOOL]).json()

    assert body["choices"][0]["message"]["content"] == "mock reply to: weather in Oslo?"
    assert body["choices"][0]["finish_reason"] == "stop"


class Unit(BaseModel):
    name: str
    size: Literal["small", "large"]


class Report(BaseModel):
    title: str
    score: float
    count: int
    done: bool
    tags: list[str]
    main: Unit
    others: list[Unit]
    note: str | None


async def test_zero_config_json_schema_output_validates_and_parses(mock_llm):
    schema = Report.model_json_schema()
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "Report", "schema": schema, "strict": True},
    }

    async with client(mock_llm) as openai_client:
        completion = await openai_client.chat.completions.create(
            model="gpt-4o-mini", messages=[user("report")], response_format=response_format
        )
        parsed = await openai_client.chat.completions.parse(
            model="gpt-4o-mini", messages=[user("report")], response_format=Report
        )

    content = json.loads(completion.choices[0].message.content)
    jsonschema.validate(content, schema)
    assert content["main"] == {"name": "example", "size": "small"}
    report = parsed.choices[0].message.parsed
    assert isinstance(report, Report)
    assert report.tags == ["example"]


def test_zero_config_json_object_mode_gives_a_json_object(mock_llm):
    body = post(mock_llm, messages=[user("hi")], response_format={"type": "json_object"}).json()

    assert json.loads(body["choices"][0]["message"]["content"]) == {"reply": "mock reply to: hi"}


# --- scripts ------------------------------------------------------------------------------


def test_the_first_rule_that_fits_answers_and_the_default_catches_the_rest(mock_llm):
    mock_llm.script(
        {
            "rules": [
                {"match": {"last_message": {"contains": "weather"}}, "reply": "weather rule"},
                {"match": {"last_message": {"regex": "^wea"}}, "reply": "never reached"},
                {"match": {"model": "big-model"}, "reply": "model rule"},
            ],
            "default": {"reply": "default"},
        }
    )

    def answer(text: str, model: str = "gpt-4o-mini") -> str:
        body = post(mock_llm, model=model, messages=[user(text)]).json()
        return body["choices"][0]["message"]["content"]

    assert answer("weather?") == "weather rule"
    assert answer("hi", model="big-model") == "model rule"
    assert answer("hi") == "default"
    assert [r.rule for r in mock_llm.requests] == [0, 2, None]


def test_times_limits_how_often_a_rule_answers(mock_llm):
    mock_llm.script([{"reply": "first", "times": 2}, {"reply": "then"}])

    replies = [post(mock_llm, messages=[user("x")]).json() for _ in range(3)]

    texts = [r["choices"][0]["message"]["content"] for r in replies]
    assert texts == ["first", "first", "then"]
    mock_llm.script([{"reply": "first", "times": 1}, {"reply": "then"}])
    assert post(mock_llm, messages=[user("x")]).json()["choices"][0]["message"]["content"] == (
        "first"
    )


def test_placeholders_bring_in_the_last_message_and_the_tool_result(mock_llm):
    mock_llm.script(
        [
            {"match": {"tool_result": True}, "reply": "Tool said {tool_result}."},
            {"reply": "You said {last_message}? {{literal}}"},
        ]
    )
    tool_turn = [
        user("q"),
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ]

    said = post(mock_llm, messages=[user("hello {name}")]).json()
    tool = post(mock_llm, messages=tool_turn).json()

    assert said["choices"][0]["message"]["content"] == "You said hello {name}? {literal}"
    assert tool["choices"][0]["message"]["content"] == "Tool said 42."


def test_json_rules_answer_with_that_json_as_the_content(mock_llm):
    mock_llm.script([{"match": {"json_schema": True}, "json": {"name": "Ada", "age": 36}}])
    response_format = {"type": "json_schema", "json_schema": {"name": "P", "schema": {}}}

    body = post(mock_llm, messages=[user("who?")], response_format=response_format).json()

    assert json.loads(body["choices"][0]["message"]["content"]) == {"name": "Ada", "age": 36}


def test_max_tokens_cuts_the_reply_with_finish_reason_length(mock_llm):
    mock_llm.script([{"reply": "a b c d e f"}])

    body = post(mock_llm, messages=[user("x")], max_tokens=3).json()

    assert body["choices"][0]["message"]["content"] == "a b c"
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 3


def test_a_script_can_set_the_finish_reason(mock_llm):
    mock_llm.script([{"reply": "cut", "finish_reason": "length"}])

    assert post(mock_llm, messages=[user("x")]).json()["choices"][0]["finish_reason"] == "length"


# --- errors and delays --------------------------------------------------------------------


async def test_a_429_rule_makes_the_openai_client_raise_rate_limit_error(mock_llm):
    mock_llm.script([{"error": {"status": 429, "message": "Slow down, please."}}])

    async with client(mock_llm) as openai_client:
        with pytest.raises(openai.RateLimitError) as raised:
            await openai_client.chat.completions.create(model="m", messages=[user("x")])

    assert raised.value.status_code == 429
    assert raised.value.body == {
        "message": "Slow down, please.",
        "type": "rate_limit_error",
        "param": None,
        "code": "rate_limit_exceeded",
    }


async def test_a_one_time_error_with_retry_after_is_survived_by_the_clients_retry(mock_llm):
    mock_llm.script(
        [{"error": {"status": 503, "message": "busy", "retry_after": 0.01}, "times": 1}]
    )

    async with client(mock_llm, max_retries=1) as openai_client:
        completion = await openai_client.chat.completions.create(model="m", messages=[user("x")])

    assert completion.choices[0].message.content == "mock reply to: x"
    assert [r.status for r in mock_llm.requests] == [503, 200]


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (404, openai.NotFoundError),
        (500, openai.InternalServerError),
    ],
)
async def test_error_statuses_map_to_the_openai_exceptions(mock_llm, status, error_class):
    mock_llm.script([{"error": {"status": status}}])

    async with client(mock_llm) as openai_client:
        with pytest.raises(error_class):
            await openai_client.chat.completions.create(model="m", messages=[user("x")])


def test_delay_holds_the_response_back(mock_llm):
    mock_llm.script([{"reply": "late", "delay": 0.3}])

    started = time.monotonic()
    body = post(mock_llm, messages=[user("x")]).json()

    assert time.monotonic() - started >= 0.3
    assert body["choices"][0]["message"]["content"] == "late"


async def test_a_delay_longer_than_the_clients_timeout_times_it_out(mock_llm):
    mock_llm.script([{"reply": "too late", "delay": 2}])

    async with client(mock_llm, timeout=0.2) as openai_client:
        with pytest.raises(openai.APITimeoutError):
            await openai_client.chat.completions.create(model="m", messages=[user("x")])


async def test_token_delay_spaces_the_stream_chunks(mock_llm):
    mock_llm.script([{"reply": "a b c d", "token_delay": 0.05}])
    arrivals = []

    async with (
        httpx.AsyncClient(timeout=10) as http,
        http.stream(
            "POST",
            f"{mock_llm.base_url}/chat/completions",
            json={"model": "m", "messages": [user("x")], "stream": True},
        ) as response,
    ):
        async for line in response.aiter_lines():
            if '"content": "' in line and '"content": ""' not in line:
                arrivals.append(time.monotonic())

    assert len(arrivals) == 4
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    assert min(gaps) >= 0.03


def test_a_scripted_api_key_is_required(mock_llm):
    mock_llm.script({"api_key": "sk-right", "rules": []})
    url = f"{mock_llm.base_url}/chat/completions"
    body = {"model": "m", "messages": [user("x")]}

    wrong = httpx.post(url, json=body, headers={"Authorization": "Bearer sk-wrong"})
    right = httpx.post(url, json=body, headers={"Authorization": "Bearer sk-right"})

    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "invalid_api_key"
    assert right.status_code == 200
    assert [r.status for r in mock_llm.requests] == [401, 200]


def test_any_api_key_is_accepted_by_default(mock_llm):
    response = httpx.post(
        f"{mock_llm.base_url}/chat/completions",
        json={"model": "m", "messages": [user("x")]},
        headers={"Authorization": "Bearer whatever"},
    )

    assert response.status_code == 200


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": [user("x")]}, "model"),
        ({"model": "m", "messages": []}, "messages"),
        ({"model": "m", "messages": ["x"]}, "messages[0]"),
        ({"model": "m", "messages": [user("x")], "tools": [{"type": "function"}]}, "tools[0]"),
    ],
)
def test_a_malformed_request_gets_a_400_naming_the_field(mock_llm, body, param):
    response = httpx.post(f"{mock_llm.base_url}/chat/completions", json=body)

    assert response.status_code == 400
    assert response.json()["error"]["param"] == param


def test_a_body_that_is_not_json_gets_a_400_and_is_recorded_as_text(mock_llm):
    response = httpx.post(f"{mock_llm.base_url}/chat/completions", content=b"not json")

    assert response.status_code == 400
    assert mock_llm.requests[0].body == "not json"


def test_an_unknown_endpoint_gets_a_404_that_lists_the_endpoints(mock_llm):
    response = httpx.post(f"{mock_llm.base_url}/responses", json={"model": "m"})

    assert response.status_code == 404
    message = response.json()["error"]["message"]
    assert "POST /v1/chat/completions" in message
    assert "Responses API" in message


# --- models, health, recording ------------------------------------------------------------


async def test_models_lists_the_scripts_models_and_mock():
    rules = [{"match": {"model": "gpt-4o"}, "reply": "a"}, {"match": {"model": "o3"}}]
    async with MockLLM(rules) as llm, client(llm) as openai_client, httpx.AsyncClient() as http:
        models = await openai_client.models.list()
        health = await http.get(f"{llm.url}/health")

    assert [m.id for m in models.data] == ["gpt-4o", "o3", "mock"]
    assert health.json() == {"status": "ok"}


def test_every_request_is_recorded_without_credentials(mock_llm):
    mock_llm.script([{"match": {"tools": ["get_weather"]}, "reply": "ok"}])
    response_format = {"type": "json_object"}

    httpx.post(
        f"{mock_llm.base_url}/chat/completions",
        json={
            "model": "gpt-4o-mini",
            "messages": [user("weather?")],
            "tools": [WEATHER_TOOL],
            "response_format": response_format,
            "stream": True,
        },
        headers={"Authorization": "Bearer secret", "X-Trace": "t-1"},
    )

    (recorded,) = mock_llm.requests
    assert recorded.path == "/v1/chat/completions"
    assert recorded.method == "POST"
    assert recorded.model == "gpt-4o-mini"
    assert recorded.messages == [user("weather?")]
    assert recorded.last_message == "weather?"
    assert recorded.tools == ["get_weather"]
    assert recorded.response_format == response_format
    assert recorded.stream is True
    assert recorded.rule == 0
    assert recorded.status == 200
    assert recorded.headers["x-trace"] == "t-1"
    assert "authorization" not in recorded.headers
    assert recorded.body["tools"] == [WEATHER_TOOL]


def test_recorded_requests_are_served_as_json_and_reset_clears_them(mock_llm):
    post(mock_llm, messages=[user("one")])
    post(mock_llm, messages=[user("two")])

    served = httpx.get(f"{mock_llm.base_url}/_requests").json()

    assert [r["messages"][-1]["content"] for r in served] == ["one", "two"]
    assert served[0]["rule"] is None
    mock_llm.reset()
    assert mock_llm.requests == []
    post(mock_llm, messages=[user("three")])
    assert httpx.delete(f"{mock_llm.base_url}/_requests").status_code == 204
    assert mock_llm.requests == []


# --- running ------------------------------------------------------------------------------


async def test_the_fixture_works_in_async_tests_and_points_openai_base_url_at_the_mock(mock_llm):
    async with AsyncOpenAI(max_retries=0) as openai_client:  # base URL from the environment
        completion = await openai_client.chat.completions.create(model="m", messages=[user("env")])

    assert completion.choices[0].message.content == "mock reply to: env"
    assert str(openai_client.base_url).rstrip("/") == mock_llm.base_url


def test_two_servers_run_side_by_side():
    first = MockLLM([{"reply": "first"}]).start_in_thread()
    second = MockLLM([{"reply": "second"}]).start_in_thread()
    try:
        assert first.port != second.port
        assert post(first, messages=[user("x")]).json()["choices"][0]["message"]["content"] == (
            "first"
        )
        assert post(second, messages=[user("x")]).json()["choices"][0]["message"]["content"] == (
            "second"
        )
    finally:
        first.stop()
        second.stop()


async def test_a_running_server_refuses_a_second_start_and_stops_cleanly():
    llm = MockLLM()
    async with llm:
        url = llm.base_url
        with pytest.raises(RuntimeError, match="already running"):
            await llm.start()
    await llm.aclose()  # a second close is a no-op

    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": [user("x")]})
    with pytest.raises(RuntimeError, match="not running"):
        _ = llm.base_url


def test_a_stopped_thread_server_can_start_again():
    llm = MockLLM().start_in_thread()
    llm.stop()
    llm.stop()
    llm.start_in_thread()
    try:
        assert post(llm, messages=[user("again")]).status_code == 200
    finally:
        llm.stop()


def test_a_bad_script_fails_before_anything_starts():
    with pytest.raises(ScriptError, match=r"rules\[0\]: unknown key 'replies'"):
        MockLLM([{"replies": "x"}])


def test_rules_built_in_python_work_like_rules_from_a_file(mock_llm):
    mock_llm.script(
        [
            Rule(match={"last_message": "ping"}, reply="pong"),
            Rule(tool_calls=[{"name": "get_time"}]),
        ]
    )

    ping = post(mock_llm, messages=[user("ping")]).json()["choices"][0]["message"]
    other = post(mock_llm, messages=[user("x")]).json()["choices"][0]["message"]

    assert ping["content"] == "pong"
    assert other["tool_calls"][0]["function"] == {"name": "get_time", "arguments": "{}"}
