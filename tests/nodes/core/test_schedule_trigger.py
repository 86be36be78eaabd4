"""Schedule Trigger: its parameters are checked when the flow is loaded (exactly one of
cron and every, five cron fields, a duration, a time zone); its output is the tick."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import nodeloom
from nodeloom.errors import GraphError
from nodeloom.nodes.core.schedule_trigger.schedule import parse_schedule
from nodeloom.nodes.flow.approval.definition import definition as approval
from nodeloom.testing.builders import chain, node


def scheduled(**parameters: object) -> dict:
    return chain(
        node("tick", "schedule-trigger", **parameters),
        node("when", "json-transform", expression="scheduled_at"),
    )


@pytest.mark.parametrize(
    ("parameters", "field", "words"),
    [
        ({}, "cron", "either"),
        ({"cron": "* * *"}, "cron", "five"),
        ({"cron": "0 9 * * *", "every": "5m"}, "cron", "not both"),
        ({"every": "5x"}, "every", "90s"),
        ({"every": "0.5"}, "every", "at least 1 second"),
        ({"every": 0}, "every", "at least 1 second"),
        ({"every": -30}, "every", "at least 1 second"),
        ({"every": 0.5}, "every", "at least 1 second"),
        ({"every": float("nan")}, "every", "give e.g. 30 (seconds), 90s or 5m"),
        ({"every": float("inf")}, "every", "at most 3650d"),
        ({"every": 1e300}, "every", "at most 3650d"),
        ({"every": True}, "every", "must be a string, got a boolean"),
        ({"every": "5m", "timezone": "Mars/Olympus"}, "timezone", "IANA"),
        ({"every": "5m", "catch_up": "some"}, "catch_up", "none"),
    ],
)
def test_a_wrong_schedule_is_refused_naming_the_parameter_and_the_fix(
    parameters: dict, field: str, words: str
) -> None:
    with pytest.raises(GraphError) as raised:
        nodeloom.load(scheduled(**parameters))
    issues = [i for i in raised.value.issues if i.node_id == "tick"]
    assert issues and issues[0].field == field and words in issues[0].message


@pytest.mark.parametrize(("every", "seconds"), [(30, 30.0), (1.5, 1.5), (1, 1.0)])
def test_every_given_as_a_json_number_is_that_many_seconds(every: float, seconds: float) -> None:
    flow = nodeloom.load(scheduled(every=every))
    assert flow is not None
    assert parse_schedule({"every": every}).every == seconds
    tick = parse_schedule({"every": every}).next_after(datetime(2026, 1, 1, tzinfo=UTC))
    assert tick == datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)


def test_a_refused_every_names_the_node_its_name_the_field_and_the_fix() -> None:
    with pytest.raises(GraphError) as raised:
        nodeloom.load(scheduled(every=0, name="Nightly"))
    [issue] = [i for i in raised.value.issues if i.node_id == "tick"]
    assert issue.code == "invalid_parameter" and issue.field == "every"
    assert issue.message.startswith("Schedule Trigger 'Nightly': every is at least 1 second")
    assert "got 0: give e.g. 30 (seconds), 90s or 5m" in issue.message
    assert "node 'tick', field 'every'" in str(raised.value)


async def test_its_output_is_the_tick_it_was_started_for() -> None:
    async with nodeloom.load(scheduled(cron="0 9 * * 1-5", timezone="Europe/Paris")) as flow:
        at = {"scheduled_at": "2026-12-01T08:00:00+00:00", "fired_at": "2026-12-01T08:00:01"}
        result = await flow.run(trigger=at)
    assert result.outputs["when"]["output"] == at["scheduled_at"]


def test_a_port_with_when_is_present_only_while_its_parameter_has_that_value() -> None:
    ports = lambda data: [p.id for p in approval.output_ports(data)]  # noqa: E731
    assert ports({}) == ["decision", "approve", "reject"]
    assert ports({"on_timeout": "answer"}) == ["decision", "approve", "reject"]
    assert ports({"on_timeout": "port"}) == ["decision", "approve", "reject", "timeout"]
