"""`--record CASSETTE` and `--replay CASSETTE`: a run's HTTP exchanges kept in a file, and
served back from it offline (docs/testing.md#cassettes)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.errors import GraphError, Issue


def cassette_options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option(
        "--replay",
        "replay_file",
        type=click.Path(),
        help="Serve every HTTP request (models, HTTP Request, MCP over HTTP) from this "
        "cassette, offline; a request it does not hold fails the run.",
    )(command)
    return click.option(
        "--record",
        "record_file",
        type=click.Path(),
        help="Record every HTTP request of the run and its response (secrets removed) "
        "in this cassette file.",
    )(command)


@contextmanager
def cassette(record_file: str | None, replay_file: str | None) -> Iterator[Any]:
    """Record or replay for the block (yields the Player when replaying, else None)."""
    if record_file and replay_file:
        raise GraphError([Issue("invalid_request", "give --record or --replay, not both")])
    from nodeloom.cassettes import CassetteError, recording, replaying

    try:
        if record_file:
            with recording(record_file):
                yield None
        elif replay_file:
            with replaying(replay_file) as player, _provider_keys():
                yield player
        else:
            yield None
    except CassetteError as exc:
        raise GraphError([Issue("invalid_cassette", str(exc))]) from None


# A replay sends nothing to a provider: a missing key must not stop it.
_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


@contextmanager
def _provider_keys() -> Iterator[None]:
    missing = [name for name in _KEYS if not os.environ.get(name)]
    for name in missing:
        os.environ[name] = "cassette-replay"
    try:
        yield
    finally:
        for name in missing:
            os.environ.pop(name, None)


def fail_on_misses(result: RunResult, player: Any) -> RunResult:
    """A replayed run that made a request the cassette does not hold has failed, whatever
    its nodes made of the answer: the error names each request."""
    if player is None or not player.misses:
        return result
    listed = "; ".join(player.misses)
    result.status = RunStatus.FAILED
    result.error = {
        "code": "cassette_miss",
        "message": f"{len(player.misses)} request(s) not in the cassette {player.path}: "
        f"{listed}; record the run again with --record",
    }
    return result
