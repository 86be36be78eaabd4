"""The `nodeloom` command. Each sub-command lives in its own module, imported only when
it is the one being run, so `nodeloom run` does not pay for the others."""

from __future__ import annotations

import importlib

import click

from nodeloom import __version__

COMMANDS = {
    "run": "nodeloom.cli.run:run_command",
    "runs": "nodeloom.cli.runs:runs_command",
    "schedules": "nodeloom.cli.schedules:schedules_command",
    "validate": "nodeloom.cli.validate:validate_command",
    "nodes": "nodeloom.cli.nodes:nodes_command",
    "plan": "nodeloom.cli.plan:plan_command",
    "convert": "nodeloom.cli.convert:convert_command",
    "chat": "nodeloom.cli.chat:chat_command",
    "mock-llm": "nodeloom.testing.mock_llm.cli:mock_llm_command",
    "serve": "nodeloom.server.command:serve_command",
    "worker": "nodeloom.cli.worker:worker_command",
    "token": "nodeloom.server.command:token_command",
    "credentials": "nodeloom.cli.credentials:credentials_command",
    "test": "nodeloom.cli.flowtests:test_command",
    "eval": "nodeloom.cli.evaluate:eval_command",
    "knowledge": "nodeloom.cli.knowledge:knowledge_command",
    "workers": "nodeloom.cli.workers:workers_command",
    "mcp": "nodeloom.cli.mcp:mcp_command",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attribute = target.split(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nodeloom")
def main() -> None:
    """nodeloom: run and inspect agent workflow graphs."""
