"""Any text compiles to a template or raises ExpressionSyntaxError; rendering a compiled
template raises only ExpressionEvalError (property-based, with hypothesis)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from nodeloom.errors import ExpressionEvalError, ExpressionSyntaxError
from nodeloom.expressions import DictScope, NodeOutput, compile_template

PIECES = st.sampled_from(
    [
        "{{",
        "}}",
        " ",
        "$json",
        "input",
        ".a",
        "[0]",
        "$('n')",
        ".item",
        ".json",
        ".outputs",
        "+",
        "-",
        "*",
        "/",
        "%",
        "==",
        "<",
        "&&",
        "||",
        "!",
        "??",
        "?",
        ":",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        "'x'",
        '"y"',
        "1",
        "2.5",
        "true",
        "null",
        "len(",
        "upper(",
        "$vars",
        "$loop",
        "\\",
        "'",
        '"',
        "\n",
    ]
)
TEXT = st.lists(PIECES, max_size=25).map("".join) | st.text(max_size=40)
SCOPE = DictScope(
    {"$json": {"a": [1, "two", {"b": None}]}, "$vars": {"k": 3}},
    {"n": NodeOutput("n", {"a": 1}, {"output": {"a": 1}})},
)


@settings(max_examples=1500, deadline=None)
@given(TEXT)
def test_any_text_compiles_or_is_a_syntax_error_and_renders_or_is_an_eval_error(text):
    try:
        template = compile_template(text)
    except ExpressionSyntaxError as exc:
        assert str(exc)
        return
    try:
        template.render(SCOPE)
    except ExpressionEvalError as exc:
        assert str(exc)
