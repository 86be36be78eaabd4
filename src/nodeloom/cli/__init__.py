"""The `nodeloom` command. Each sub-command lives in its own module."""

from __future__ import annotations

import click

from nodeloom import __version__
from nodeloom.cli.chat import chat_command
from nodeloom.cli.nodes import nodes_command
from nodeloom.cli.plan import plan_command
from nodeloom.cli.run import run_command
from nodeloom.cli.validate import validate_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nodeloom")
def main() -> None:
    """nodeloom: run and inspect agent workflow graphs."""


main.add_command(run_command)
main.add_command(validate_command)
main.add_command(nodes_command)
main.add_command(plan_command)
main.add_command(chat_command)
