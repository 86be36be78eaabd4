"""Ethan LLM: render a prompt template and call the model (`type: llm`)."""

from nodeloom.formats.ethan.catalogue import (
    INPUT,
    RESULT,
    ROUTE,
    ROUTES,
    check_spec,
    spec_parameter,
)
from nodeloom.plugins.contract import NodeDefinition

definition = NodeDefinition(
    id="ethan-llm",
    name="Ethan LLM",
    category="formats",
    description="An Ethan `llm` node: renders its prompt template (partials expanded) with "
    "the state and inputs, calls the model of meta.defaults.llm, then maps and routes with "
    "`result` = {text, json, usage, ...}.",
    icon="Sparkles",
    execution_mode="hybrid",
    inputs=(INPUT,),
    outputs=(RESULT, ROUTE),
    parameters=(
        spec_parameter(
            'The node: {"id", "prompt", "messages": [{"role", "content"}], "model": '
            '{"model", "base_url"?, "api_key"?, "temperature"?, "max_tokens"?}, "map", '
            '"routes"}.'
        ),
        ROUTES,
    ),
    side_effects="external",
    check=check_spec,
)
