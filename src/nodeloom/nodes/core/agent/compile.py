"""Compiling an Agent node and what is wired into its tools into an Agno Agent or Team."""

from __future__ import annotations

from typing import Any

from nodeloom.models.llm import spec_from_parameters
from nodeloom.models.resolve import create_model
from nodeloom.plugins.contract import AgentResult, BuildContext

_DATABASES: dict[str, Any] = {}


def session_db(path: str) -> Any:
    """One Agno SQLite session store per file, shared by every agent of the process."""
    db = _DATABASES.get(path)
    if db is None:
        from pathlib import Path

        from agno.db.sqlite import SqliteDb

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = _DATABASES[path] = SqliteDb(db_file=path)
    return db


def compile_agent(data: dict[str, Any], context: BuildContext) -> AgentResult:
    spec = spec_from_parameters(data, where=f"'{context.node_name}'")
    model = create_model(spec, where=f"'{context.node_name}'", http_client=context.http_client())
    tools = [tool for source in context.tools for tool in source.tools]
    names = [name for source in context.tools for name in source.names]
    common: dict[str, Any] = {
        "name": context.node_name,
        "model": model,
        "tools": tools or None,
        "instructions": data.get("instructions") or None,
        "description": data.get("description") or None,
        "telemetry": False,
        "markdown": False,
    }
    if data.get("tool_call_limit"):
        common["tool_call_limit"] = data["tool_call_limit"]
    if data.get("history", True):
        common["db"] = session_db(str(context.services.session_db_file))
        common["add_history_to_context"] = True
        common["num_history_runs"] = data.get("num_history_runs") or 10
    summary: dict[str, Any] = {
        "node": context.node_name,
        "model": spec.reference,
        "tools": names,
        "tool_sources": [s.source for s in context.tools],
    }
    if context.sub_agents:
        from agno.team import Team
        from agno.team.mode import TeamMode

        mode = data.get("team_mode") or "coordinate"
        agent: Any = Team(
            members=[result.agent for _, result in context.sub_agents],
            mode=TeamMode(mode),
            stream_member_events=True,
            **common,
        )
        summary.update(
            kind="Team", mode=mode, members=[result.summary for _, result in context.sub_agents]
        )
    else:
        from agno.agent import Agent

        agent = Agent(**common)
        summary["kind"] = "Agent"
    return AgentResult(agent, summary)
