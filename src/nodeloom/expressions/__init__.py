"""The `{{ ... }}` expression language of node parameters (see docs/expressions.md).

    template = compile_template("Hello {{ $json.name }}")
    template.render(DictScope({"$json": {"name": "Ada"}}))  # -> "Hello Ada"

Expressions are parsed and compiled once; rendering walks only JSON-like values and the
whitelisted functions, never Python attributes or `eval`.
"""

from nodeloom.expressions.evaluate import Expression
from nodeloom.expressions.scope import MISSING, DictScope, NodeOutput, Scope
from nodeloom.expressions.template import (
    Template,
    compile_expression,
    compile_template,
    has_expression,
)

__all__ = [
    "MISSING",
    "DictScope",
    "Expression",
    "NodeOutput",
    "Scope",
    "Template",
    "compile_expression",
    "compile_template",
    "has_expression",
]
