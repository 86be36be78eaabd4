"""Schedule Trigger: its parameters are checked when the flow is loaded (exactly one of
cron and every, five cron fields, a duration, a time zone); its output is the tick."""

from __future__ import annotations

import pytest

import nodeloom
from nodeloom.errors import GraphError
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
