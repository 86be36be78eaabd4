"""Wait: hold the spine for `seconds`, or until a time; durable past a few seconds."""

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

SLEEP_UNDER = 2.0  # seconds: a shorter wait just sleeps; a longer one may pause the run


def check_wait(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Exactly one of `seconds` and `until`."""
    seconds, until = data.get("seconds"), data.get("until")
    if (seconds is None) == (until in (None, "")):
        return [
            (
                "seconds",
                "give the Wait either `seconds` (e.g. 30) or `until` (an ISO 8601 time, "
                "e.g. 2026-12-01T09:00:00Z or {{ $json.remind_at }}), not both nor neither",
            )
        ]
    if seconds is not None and (
        isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0
    ):
        return [("seconds", f"seconds is a number >= 0, got {seconds!r}")]
    return []


definition = NodeDefinition(
    id="wait",
    name="Wait",
    category="flow",
    description="Waits `seconds`, or until the time `until`, then passes its input on. A "
    "recorded run waiting longer than 2 s is paused with its wake time and holds no memory; "
    "the server resumes it on time, also after a restart.",
    icon="Hourglass",
    inputs=(Port("input", required=False, description="Passed on unchanged."),),
    outputs=(Port("output", description="The input, once the wait is over."),),
    parameters=(
        Parameter(
            "seconds",
            "number",
            "Seconds",
            minimum=0,
            description="How long to wait. Leave empty to wait `until` a time instead.",
        ),
        Parameter(
            "until",
            "string",
            "Until",
            placeholder="2026-12-01T09:00:00Z",
            description="An ISO 8601 time to wait for (no zone: UTC); expressions allowed, "
            "e.g. {{ $json.remind_at }}. A time already past does not wait.",
        ),
    ),
    side_effects="pure",
    interactive=True,  # it waits like a person's node: a recorded run pauses on it
    check=check_wait,
)
