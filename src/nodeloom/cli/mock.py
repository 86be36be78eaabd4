"""`--mock-llm SCRIPT`: run a flow against the scripted LLM server, in-process."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import click

from nodeloom.errors import GraphError, Issue

_VARIABLES = ("OPENAI_BASE_URL", "OPENAI_API_KEY")

mock_llm_option = click.option(
    "--mock-llm",
    "mock_script",
    type=click.Path(),
    help="Serve this mock LLM script and point OpenAI-protocol models at it "
    "(test a flow offline, without spending tokens).",
)


@asynccontextmanager
async def mock_llm(script_file: str | None) -> AsyncIterator[Any]:
    """Serve the script on a free loopback port and point OpenAI-protocol models at it
    (OPENAI_BASE_URL, and a dummy OPENAI_API_KEY) for the duration."""
    if script_file is None:
        yield None
        return
    from nodeloom.testing.mock_llm import MockLLM, ScriptError, load_script

    try:
        script = load_script(script_file)
    except ScriptError as exc:
        raise GraphError([Issue("invalid_mock_script", str(exc))]) from None
    saved = {name: os.environ.get(name) for name in _VARIABLES}
    async with MockLLM(script) as llm:
        os.environ["OPENAI_BASE_URL"] = llm.base_url
        os.environ["OPENAI_API_KEY"] = "mock-llm"
        try:
            yield llm
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
