"""Logs: plain text (uvicorn's style) or one JSON object per line, with the run and node
a line was written in, and never an access token.

    configure_logging("json")        # a process of its own (`nodeloom worker`)
    uvicorn.run(app, log_config=logging_config("json"))   # `nodeloom serve --log-format json`

A JSON line: `{"time", "level", "logger", "message"}`, plus `run_id` and `node_id` when it
was logged inside a run or a node (`RUN_ID`, `NODE_ID`: context variables that
`LogContext`, a sink every RunService installs, sets from the run's own events), and
`exception` with a traceback. `HideQueryTokens` masks credentials in URLs (a WebSocket's
`?token=`, a provider's `?key=`, a decision link's signed path) and `Bearer ...` in every
line, in both formats.
"""

from __future__ import annotations

import copy
import json
import logging
import logging.config
import re
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal

from nodeloom.plugins.contract import Event

LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[str, ...] = ("text", "json")

RUN_ID: ContextVar[str | None] = ContextVar("nodeloom_log_run_id", default=None)
NODE_ID: ContextVar[str | None] = ContextVar("nodeloom_log_node_id", default=None)

run_log = logging.getLogger("nodeloom.runs")
QUIET_LOGGERS = ("httpx", "httpcore", "openai", "agno", "mcp")

# -- secrets out ---------------------------------------------------------------------------

# Query parameters that carry credentials: ?token=, ?access_token=, ?key= (Gemini),
# ?api_key=, ?password=, ?secret=, ?sig= ...
_QUERY = re.compile(
    r"(?i)((?:^|[?&;])(?:[\w-]*token|[\w-]*key|password|secret|sig|signature)=)[^&;\s\"']*"
)
_BEARER = re.compile(r"(?i)(\bbearer\s+)[^\s\"',;]+")
_DECISION = re.compile(r"(/api/decisions/)[^/?#\s\"']+")  # a signed link is a capability
MASK = "***"


def hide_tokens(text: str) -> str:
    """`text` with credentials replaced by `***`: the values of query parameters such as
    `token=`, `api_key=`, `key=`; `Bearer` credentials; decision links' signed tokens."""
    lowered = text.lower()
    if "=" in lowered:
        text = _QUERY.sub(lambda match: match.group(1) + MASK, text)
    if "bearer" in lowered:
        text = _BEARER.sub(lambda match: match.group(1) + MASK, text)
    if "/api/decisions/" in lowered:
        text = _DECISION.sub(lambda match: match.group(1) + MASK, text)
    return text


class HideQueryTokens(logging.Filter):
    """Masks tokens (see `hide_tokens`) in a record's message and string arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = hide_tokens(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(
                hide_tokens(arg) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


# -- one JSON object per line ----------------------------------------------------------------


class JsonFormatter(logging.Formatter):
    """A record as one line of JSON: time (ISO 8601, UTC), level, logger, message, and
    run_id / node_id / exception when there are."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": hide_tokens(record.getMessage()),
        }
        run_id, node_id = RUN_ID.get(), NODE_ID.get()
        if run_id is not None:
            line["run_id"] = run_id
        if node_id is not None:
            line["node_id"] = node_id
        if record.exc_info:
            line["exception"] = hide_tokens(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False, default=str)


def logging_config(log_format: LogFormat = "text", level: str = "INFO") -> dict[str, Any]:
    """A `logging.config.dictConfig` configuration (uvicorn's `log_config`): uvicorn's
    own, with `HideQueryTokens` on every handler; for "json", every line is JSON and
    nodeloom's loggers (the root logger) write at `level` too."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["hide_query_tokens"] = {"()": HideQueryTokens}
    for handler in config["handlers"].values():
        handler.setdefault("filters", []).append("hide_query_tokens")
    if log_format == "json":
        formatter = {"()": f"{__name__}.JsonFormatter"}
        config["formatters"] = {"default": formatter, "access": dict(formatter)}
        config["root"] = {"handlers": ["default"], "level": level}
        # Their INFO lines are every request a node makes, URL and all: not for a log.
        config["loggers"].update({name: {"level": "WARNING"} for name in QUIET_LOGGERS})
    return config


def configure_logging(log_format: LogFormat = "text", level: str = "INFO") -> None:
    """Set up this process's logging: `logging_config(log_format, level)`, with the root
    logger (nodeloom's loggers) writing at `level` in both formats."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format {log_format!r}: expected one of {', '.join(LOG_FORMATS)}")
    config = logging_config(log_format, level)
    config["root"] = {"handlers": ["default"], "level": level}
    config["loggers"].update({name: {"level": "WARNING"} for name in QUIET_LOGGERS})
    logging.config.dictConfig(config)


# -- which run and node a line belongs to ----------------------------------------------------


class LogContext:
    """An event sink that tells the log which run and node it is in: `RUN_ID` from the
    run's first event (set in the run's task, so its nodes inherit it), `NODE_ID` while a
    node runs (events are emitted from the node's own task). It also logs each node's
    failure and the run's end, at INFO, from the events (already cleared of secrets)."""

    def emit(self, event: Event) -> None:
        kind = event.event_type
        if kind == "started":
            NODE_ID.set(event.node_id)
        elif kind == "completed" or kind == "error":
            if kind == "error":
                _node_failed(event)
            if NODE_ID.get() == event.node_id:
                NODE_ID.set(None)
        elif kind == "run_started" or kind == "run_resumed":
            RUN_ID.set(event.run_id)
        elif kind in _RUN_ENDS:
            _run_ended(event, _RUN_ENDS[kind])


_RUN_ENDS = {"run_completed": "completed", "run_failed": "failed", "run_cancelled": "cancelled"}


def _node_failed(event: Event) -> None:
    if not run_log.isEnabledFor(logging.INFO):
        return
    data = event.data or {}
    error = data.get("error") if isinstance(data.get("error"), dict) else {}
    handled = " (handled)" if data.get("handled") else ""
    run_log.info(
        "node %s (%s, %s) failed%s: %s: %s",
        event.node_id,
        event.node_name,
        event.node_type,
        handled,
        error.get("code", "node_error"),
        str(error.get("message", ""))[:500],
    )


def _run_ended(event: Event, status: str) -> None:
    if not run_log.isEnabledFor(logging.INFO):
        return
    data = event.data or {}
    duration = data.get("duration_ms")
    took = f" in {duration:.1f} ms" if isinstance(duration, int | float) else ""
    error = data.get("error") if isinstance(data.get("error"), dict) else None
    why = f": {error.get('code')}: {str(error.get('message', ''))[:500]}" if error else ""
    run_log.info("run %s %s%s%s", event.run_id, status, took, why)


LOG_CONTEXT = LogContext()
