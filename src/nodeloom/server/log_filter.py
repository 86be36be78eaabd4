"""Keeping the `?token=` of a WebSocket URL out of the server's log.

Browsers cannot set headers on a WebSocket, so a client may send its API token in the
query string (`/api/runs/{id}/ws?token=...`); uvicorn logs each request's path with its
query. `HideQueryTokens` masks the value of every `token=` in a log record's arguments and
message; `log_config()` is uvicorn's logging setup with it on both handlers.
"""

from __future__ import annotations

import copy
import logging
import re
from typing import Any

_TOKEN = re.compile(r"(?i)((?:^|[?&;])token=)[^&;\s\"']*")
MASK = "***"


def hide_tokens(text: str) -> str:
    return _TOKEN.sub(lambda match: match.group(1) + MASK, text)


class HideQueryTokens(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and "token=" in record.msg.lower():
            record.msg = hide_tokens(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(
                hide_tokens(arg) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's default logging configuration, with `HideQueryTokens` on its handlers."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["hide_query_tokens"] = {"()": HideQueryTokens}
    for handler in config["handlers"].values():
        handler.setdefault("filters", []).append("hide_query_tokens")
    return config
