"""Agno agents against the mock LLM: a tool round-trip, a streamed run, structured output."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from agno.agent import Agent, RunOutput
from agno.models.message import Message
from agno.models.openai import OpenAIChat
from agno.run.agent import RunContentEvent, ToolCallCompletedEvent, ToolCallStartedEvent
from pydantic import BaseModel

from nodeloom.testing.mock_llm import MockLLM

WEATHER_SCRIPT = {
    "rules": [
        {
            "match": {"tools": ["get_weather"], "tool_result": False},
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
        {"match": {"tool_result": "get_weather"}, "reply": "Forecast: {tool_result}. Enjoy!"},
    ]
}


@pytest.fixture
async def model(mock_llm: MockLLM) -> AsyncIterator[OpenAIChat]:
    """Agno's OpenAIChat pointed at the mock; its cached HTTP client is closed afterwards
    (Agno leaves it open, and an unclosed socket is a ResourceWarning, so an error here)."""
    chat = OpenAIChat(id="gpt-4o-mini", base_url=mock_llm.base_url, api_key="test")
    yield chat
    if chat.async_client is not None:
        await chat.async_client.close()


@pytest.fixture
def weather_calls() -> list[str]:
    return []


@pytest.fixture
def weather_agent(mock_llm, model, weather_calls) -> Agent:
    def get_weather(city: str) -> str:
        """The weather in a city."""
        weather_calls.append(city)
        return f"sunny in {city}"

    mock_llm.script(WEATHER_SCRIPT)
    return Agent(model=model, tools=[get_weather])


async def test_an_agent_calls_the_scripted_tool_and_answers_with_its_result(
    mock_llm, weather_agent, weather_calls
):
    output = await weather_agent.arun("What is the weather in Paris?")

    assert output.content == "Forecast: sunny in Paris. Enjoy!"
    assert weather_calls == ["Paris"]
    first, second = mock_llm.requests
    assert (first.rule, second.rule) == (0, 1)
    assert first.tools == ["get_weather"]
    assert first.last_message == "What is the weather in Paris?"
    assert [m["role"] for m in second.messages][-2:] == ["assistant", "tool"]
    assert second.last_message == "sunny in Paris"


async def test_a_streamed_agent_run_delivers_the_tokens_in_order(
    mock_llm, weather_agent, weather_calls
):
    mock_llm.script(
        [*WEATHER_SCRIPT["rules"][:1], {"token_delay": 0.01, **WEATHER_SCRIPT["rules"][1]}]
    )
    events = [
        event
        async for event in weather_agent.arun(
            "weather?", stream=True, stream_events=True, yield_run_output=True
        )
    ]

    tokens = [e.content for e in events if isinstance(e, RunContentEvent) and e.content]
    assert tokens == ["Forecast: ", "sunny ", "in ", "Paris. ", "Enjoy!"]
    started = next(e for e in events if isinstance(e, ToolCallStartedEvent))
    completed = next(e for e in events if isinstance(e, ToolCallCompletedEvent))
    assert started.tool is not None
    assert started.tool.tool_name == "get_weather"
    assert started.tool.tool_args == {"city": "Paris"}
    assert completed.tool is not None
    assert completed.tool.result == "sunny in Paris"
    assert isinstance(events[-1], RunOutput)
    assert events[-1].content == "Forecast: sunny in Paris. Enjoy!"
    assert weather_calls == ["Paris"]
    assert all(r.stream for r in mock_llm.requests)
    assert mock_llm.requests[0].body["stream_options"] == {"include_usage": True}


async def test_an_agents_run_reports_the_mock_usage(mock_llm, model):
    mock_llm.script([{"reply": "three word reply"}])
    agent = Agent(model=model)

    output = await agent.arun("two words")

    assert output.metrics is not None
    assert output.metrics.output_tokens == 3
    assert output.metrics.input_tokens >= 2


class City(BaseModel):
    name: str
    population: int
    capital: bool


async def test_an_agent_with_an_output_schema_gets_a_valid_object_with_zero_config(mock_llm, model):
    agent = Agent(model=model, output_schema=City)

    output = await agent.arun("Tell me about Paris")

    assert output.content == City(name="example", population=0, capital=False)
    (recorded,) = mock_llm.requests
    assert recorded.response_format is not None
    assert recorded.response_format["type"] == "json_schema"


async def test_an_agent_with_an_output_schema_gets_the_scripted_json(mock_llm, model):
    mock_llm.script(
        [
            {
                "match": {"json_schema": True},
                "json": {"name": "Paris", "population": 2100000, "capital": True},
            }
        ]
    )
    agent = Agent(model=model, output_schema=City)

    output = await agent.arun("Tell me about Paris")

    assert output.content == City(name="Paris", population=2100000, capital=True)


async def test_a_single_model_call_with_a_response_format(mock_llm, model):
    response = await model.aresponse(
        messages=[Message(role="user", content="a city please")], response_format=City
    )

    assert City.model_validate(json.loads(response.content)) == City(
        name="example", population=0, capital=False
    )
