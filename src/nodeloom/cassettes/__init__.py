"""Cassettes: a run's HTTP exchanges (model calls, HTTP Request nodes, MCP over HTTP)
recorded to a file, and served back so the run is reproduced offline
(`nodeloom run --record/--replay`, docs/testing.md#cassettes)."""

from nodeloom.cassettes.format import CassetteError
from nodeloom.cassettes.player import Player, Recorder, recording, replaying

__all__ = ["CassetteError", "Player", "Recorder", "recording", "replaying"]
