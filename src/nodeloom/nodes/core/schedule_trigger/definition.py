"""Schedule Trigger: where a tick of a schedule enters the graph."""

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port


def check_schedule(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Exactly one of cron / every, each well formed; a known time zone. Each message
    starts with the node's name (the issue carries its id)."""
    from nodeloom.nodes.core.schedule_trigger.schedule import ScheduleError, parse_schedule

    name = data.get("name")
    node = f"Schedule Trigger {name!r}" if isinstance(name, str) and name else "Schedule Trigger"
    if any(isinstance(data.get(key), str) and "{{" in data[key] for key in ("cron", "every")):
        return [("cron", f"{node}: a schedule is fixed when the flow is saved: no expressions")]
    try:
        parse_schedule(data)
    except ScheduleError as exc:
        return [(exc.field, f"{node}: {exc}")]
    return []


definition = NodeDefinition(
    id="schedule-trigger",
    name="Schedule Trigger",
    category="trigger",
    description="Starts the saved flow on a schedule (`cron` or `every`) while `nodeloom "
    'serve` runs, once per tick across all servers. Outputs {"scheduled_at", "fired_at"}.',
    icon="Clock",
    execution_mode="flow",
    inputs=(),
    outputs=(
        Port(
            "output",
            description='{"scheduled_at": <the tick, ISO 8601 UTC>, "fired_at": <when the '
            "run was started>}",
        ),
    ),
    parameters=(
        Parameter(
            "cron",
            "string",
            "Cron",
            placeholder="0 9 * * 1-5",
            description="Five fields: minute hour day-of-month month day-of-week, read in "
            "`timezone`. Leave empty to use `every`.",
        ),
        Parameter(
            "every",
            "string",
            "Every",
            placeholder="5m",
            description="An interval: seconds (30, or the JSON number 30 or 1.5) or 90s, 5m, "
            "1h30m, 2d; at least 1 s. Ticks are aligned to the Unix epoch (5m: :00, :05, ...).",
            allow_number=True,
        ),
        Parameter(
            "timezone",
            "string",
            "Time zone",
            default="UTC",
            description="The IANA time zone `cron` is read in, e.g. Europe/Paris.",
        ),
        Parameter(
            "catch_up",
            "enum",
            "Catch up",
            default="none",
            options=("none", "last", "all"),
            description="Ticks missed while no server ran: none skips them; last fires the "
            "latest once; all fires each (at most 100).",
        ),
    ),
    trigger=True,
    side_effects="pure",
    output_shape={"scheduled_at": "string", "fired_at": "string"},
    check=check_schedule,
)
