"""A Schedule Trigger's ticks: pure time arithmetic, no I/O.

`cron`: five fields (minute hour day-of-month month day-of-week), read in `timezone`
(IANA name, default UTC) by croniter. `every`: a number of seconds (the JSON number 30 or
1.5, or the text "30"), or a duration such as `90s`, `5m`, `1h30m`, `2d` (at least 1 s, at
most 10 years); its ticks are aligned to the Unix epoch (every 5m fires at :00, :05, ...),
so every server computes the same ticks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

CATCH_UP = ("none", "last", "all")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)([smhd]))+")
PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
LONGEST_EVERY = 3650 * 86400  # 10 years: a tick stays a representable date


class ScheduleError(ValueError):
    """A schedule's parameters are wrong; `field` names the parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class Schedule:
    cron: str | None
    every: float | None  # seconds
    timezone: str
    catch_up: str

    def to_json(self) -> dict[str, Any]:
        return {
            "cron": self.cron,
            "every": self.every,
            "timezone": self.timezone,
            "catch_up": self.catch_up,
        }

    def next_after(self, moment: datetime) -> datetime:
        """The first tick strictly after `moment` (UTC)."""
        if self.every is not None:
            seconds = moment.timestamp()
            tick = (math.floor(seconds / self.every) + 1) * self.every
            return datetime.fromtimestamp(tick, UTC)
        from croniter import croniter

        assert self.cron is not None
        local = moment.astimezone(ZoneInfo(self.timezone))
        following: datetime = croniter(self.cron, local).get_next(datetime)
        return following.astimezone(UTC)

    def ticks(self, first: datetime, until: datetime, limit: int) -> list[datetime]:
        """`first` and the ticks after it up to `until` (the latest `limit` of them)."""
        found = [first]
        while True:
            tick = self.next_after(found[-1])
            if tick > until:
                return found[-limit:]
            found.append(tick)
            if len(found) > 2 * limit:
                found = found[-limit:]


def parse_every(value: Any) -> float:
    """Seconds of an `every`: a number (int or float, not a boolean), or text such as 30,
    1.5, 90s, 5m, 1h30m, 2d. At least 1 second, at most LONGEST_EVERY."""
    fix = "give seconds (30 or 1.5) or a number with s, m, h or d (90s, 5m, 1h30m, 2d)"
    if isinstance(value, bool):
        raise ScheduleError("every", f"every is a duration, got the boolean {value!r}: {fix}")
    plain = isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?", value.strip())
    if isinstance(value, int | float) or plain:
        seconds = float(value)
    elif isinstance(value, str) and DURATION.fullmatch(value.strip().lower()):
        seconds = sum(float(n) * UNITS[u] for n, u in PART.findall(value.strip().lower()))
    else:
        raise ScheduleError("every", f"every {value!r} is not a duration: {fix}")
    if not math.isfinite(seconds) or not 1 <= seconds <= LONGEST_EVERY:
        raise ScheduleError(
            "every",
            f"every is at least 1 second and at most 3650d, got {value!r}: give e.g. 30 "
            "(seconds), 90s or 5m",
        )
    return seconds


def parse_schedule(data: Mapping[str, Any]) -> Schedule:
    """The Schedule of a Schedule Trigger's parameters. Raises ScheduleError."""
    cron, every = data.get("cron"), data.get("every")
    cron = cron.strip() if isinstance(cron, str) and cron.strip() else None
    every = None if every in (None, "") else every
    if (cron is None) == (every is None):
        raise ScheduleError(
            "cron",
            "give the Schedule Trigger either `cron` (five fields, e.g. '0 9 * * 1-5') or "
            "`every` (e.g. 5m), not both nor neither",
        )
    timezone = data.get("timezone") or "UTC"
    try:
        ZoneInfo(str(timezone))
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(
            "timezone", f"timezone {timezone!r} is not an IANA time zone, e.g. Europe/Paris"
        ) from None
    catch_up = data.get("catch_up") or "none"
    if catch_up not in CATCH_UP:
        raise ScheduleError("catch_up", f"catch_up is one of {', '.join(CATCH_UP)}")
    if cron is not None:
        from croniter import croniter

        if len(cron.split()) != 5 or not croniter.is_valid(cron):
            raise ScheduleError(
                "cron",
                f"cron {cron!r} is not five cron fields (minute hour day month weekday), "
                "e.g. '*/15 * * * *' or '0 9 * * 1-5'",
            )
        return Schedule(cron, None, str(timezone), catch_up)
    return Schedule(None, parse_every(every), str(timezone), catch_up)


def to_fire(
    schedule: Schedule, due: datetime, now: datetime, grace: float, limit: int = 100
) -> tuple[list[datetime], datetime]:
    """Which ticks to fire now that `due` (the stored next tick) has come, and the next
    tick to store. Missed ticks (those more than `grace` seconds late: nothing was running
    then) follow `catch_up`: none fires only a tick still within grace; last the latest;
    all every one (the latest `limit`)."""
    ticks = schedule.ticks(due, now, limit)
    following = schedule.next_after(now)
    if schedule.catch_up == "all":
        return ticks, following
    if schedule.catch_up == "last":
        return ticks[-1:], following
    late = now - ticks[-1]
    return (ticks[-1:] if late <= timedelta(seconds=grace) else []), following
