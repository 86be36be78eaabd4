"""`nodeloom credentials set|list|delete`: the credential vault (docs/credentials.md)."""

from __future__ import annotations

import sys

import click

from nodeloom.errors import NodeloomError
from nodeloom.paths import data_dir
from nodeloom.secrets import Vault


@click.group("credentials")
def credentials_command() -> None:
    """Secrets flows refer to as {{ $credentials.NAME }}, encrypted at rest."""


@credentials_command.command("set")
@click.argument("name")
def set_credential(name: str) -> None:
    """Save NAME; the value is read from standard input (prompted for, hidden, on a tty)."""
    if sys.stdin.isatty():
        value = click.prompt(f"value of {name}", hide_input=True)
    else:
        value = sys.stdin.read().rstrip("\r\n")
    try:
        Vault(data_dir()).set(name, value)
    except NodeloomError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"saved credential '{name}'", err=True)


@credentials_command.command("list")
def list_credentials() -> None:
    """Names and times (never values)."""
    try:
        for info in Vault(data_dir()).names():
            click.echo(f"{info.name}\t{info.updated_at}")
    except NodeloomError as exc:
        raise click.ClickException(str(exc)) from None


@credentials_command.command("delete")
@click.argument("name")
def delete_credential(name: str) -> None:
    """Remove NAME."""
    if not Vault(data_dir()).delete(name):
        raise click.ClickException(f"there is no credential '{name}'")
