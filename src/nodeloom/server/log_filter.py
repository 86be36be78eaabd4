"""Keeping the `?token=` of a WebSocket URL (and any `Bearer` credential) out of the
server's log.

Browsers cannot set headers on a WebSocket, so a client may send its API token in the
query string (`/api/runs/{id}/ws?token=...`); uvicorn logs each request's path with its
query. `HideQueryTokens` (nodeloom.observability.logs, shared with `nodeloom worker`) masks
the value of every `token=` in a log record's arguments and message; `log_config()` is
uvicorn's logging setup with it on both handlers, in text or JSON lines.
"""

from __future__ import annotations

from typing import Any

from nodeloom.observability.logs import MASK, HideQueryTokens, LogFormat, hide_tokens
from nodeloom.observability.logs import logging_config as _logging_config

__all__ = ["MASK", "HideQueryTokens", "hide_tokens", "log_config"]


def log_config(log_format: LogFormat = "text") -> dict[str, Any]:
    """uvicorn's logging configuration, with `HideQueryTokens` on its handlers; "json":
    one JSON object per line, nodeloom's own loggers included (docs/observability.md)."""
    return _logging_config(log_format)
