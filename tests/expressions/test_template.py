"""Templates: splitting text into literal parts and `{{ }}` expressions, and rendering."""

from __future__ import annotations

from typing import Any

import pytest

from nodeloom.errors import ExpressionEvalError, ExpressionSyntaxError
from nodeloom.expressions import (
    MISSING,
    DictScope,
    Expression,
    NodeOutput,
    Template,
    compile_expression,
    compile_template,
    has_expression,
)
from nodeloom.values import BinaryRef

SCOPE = DictScope(
    {
        "$json": {
            "name": "Ada",
            "age": 36,
            "score": 9.5,
            "ok": True,
            "none": None,
            "tags": ["a", "b"],
            "meta": {"city": "Zürich"},
        }
    },
    {"Set": NodeOutput("Set", {"id": 7})},
)


def render(text: str) -> Any:
    return compile_template(text).render(SCOPE)


# -- has_expression ---------------------------------------------------------------------


def test_has_expression_is_true_when_the_text_contains_double_braces() -> None:
    assert has_expression("Hi {{ $json.name }}")
    assert has_expression("{{")


def test_has_expression_is_false_for_plain_text_and_single_braces() -> None:
    assert not has_expression("Hi there")
    assert not has_expression('{"a": {"b": 1}}')


# -- splitting ----------------------------------------------------------------------------


def test_text_without_expressions_is_returned_as_is() -> None:
    assert render("plain } text { with }} braces") == "plain } text { with }} braces"


def test_an_empty_text_renders_empty() -> None:
    assert render("") == ""


def test_two_expressions_in_one_string_both_render() -> None:
    assert render("{{ $json.name }} and {{ $json.age }}") == "Ada and 36"


def test_literal_text_between_and_around_expressions_is_kept() -> None:
    assert render("<{{ 1 }}|{{ 2 }}>") == "<1|2>"


def test_adjacent_expressions_render_back_to_back() -> None:
    assert render("{{ 'a' }}{{ 'b' }}") == "ab"


def test_closing_braces_inside_a_string_do_not_close_the_expression() -> None:
    assert render('{{ "}}" }}') == "}}"
    assert render("x{{ '}} ' + $json.name }}y") == "x}} Aday"


def test_literal_double_braces_are_written_as_a_string() -> None:
    assert render("{{ '{{' }} name {{ '}}' }}") == "{{ name }}"


def test_an_object_literal_may_end_with_the_closing_braces() -> None:
    assert render('{{ {"a": {"b": 1}} }}') == {"a": {"b": 1}}
    assert render("{{ {a: 1}}}") == {"a": 1}


def test_a_brace_after_the_closing_braces_is_literal_text() -> None:
    assert render("{{ 1 }}}") == "1}"


def test_expressions_may_span_lines() -> None:
    assert render("{{\n  $json.name\n}}") == "Ada"


def test_an_error_in_the_second_expression_points_at_it() -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_template("{{ $json.name }} and {{ $json. }}")
    assert str(caught.value) == (
        "expected a field name after '.' but found end of expression at column 32 in {{ $json. }}"
    )


def test_an_unclosed_expression_after_a_good_one_is_an_error() -> None:
    with pytest.raises(ExpressionSyntaxError, match=r"^unclosed '\{\{' at column 13"):
        compile_template("{{ 1 }} and {{ 2")


# -- is_single and native values ----------------------------------------------------------


def test_a_single_expression_keeps_its_native_type() -> None:
    assert render("{{ $json.age }}") == 36
    assert render("{{ $json.ok }}") is True
    assert render("{{ $json.none }}") is None
    assert render("{{ $json.tags }}") == ["a", "b"]
    assert render("{{ $json.meta }}") == {"city": "Zürich"}


def test_surrounding_whitespace_still_counts_as_single() -> None:
    template = compile_template("  \n{{ $json.age }}\t ")
    assert template.is_single
    assert template.render(SCOPE) == 36


def test_text_around_an_expression_makes_it_a_string() -> None:
    template = compile_template("age: {{ $json.age }}")
    assert not template.is_single
    assert template.render(SCOPE) == "age: 36"


def test_two_expressions_are_not_single() -> None:
    assert not compile_template("{{ 1 }}{{ 2 }}").is_single


def test_plain_text_is_not_single() -> None:
    assert not compile_template("hello").is_single


def test_a_single_expression_returns_the_scope_value_itself() -> None:
    data = {"items": [1, 2]}
    assert compile_template("{{ $json.items }}").render(DictScope({"$json": data})) is data["items"]


# -- converting values to text --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("v={{ $json.name }}", "v=Ada"),
        ("v={{ $json.ok }}", "v=true"),
        ("v={{ !$json.ok }}", "v=false"),
        ("v={{ $json.none }}", "v=null"),
        ("v={{ $json.age }}", "v=36"),
        ("v={{ $json.score }}", "v=9.5"),
        ("v={{ 3.0 }}", "v=3.0"),
        ("v={{ $json.tags }}", 'v=["a", "b"]'),
        ("v={{ $json.meta }}", 'v={"city": "Zürich"}'),
        ("v={{ [] }}", "v=[]"),
    ],
)
def test_values_inside_text_are_converted(text: str, rendered: str) -> None:
    assert render(text) == rendered


def test_a_binary_reference_renders_as_its_json_form() -> None:
    scope = DictScope({"$json": {"file": BinaryRef("blob:1", "text/plain", 3)}})
    rendered = compile_template("file: {{ $json.file }}").render(scope)
    assert rendered == 'file: {"$ref": "blob:1", "mime": "text/plain", "size": 3}'


def test_a_value_without_a_text_form_is_an_error() -> None:
    scope = DictScope({"$json": {"x": {1, 2, 3}.__iter__()}})
    with pytest.raises(ExpressionEvalError, match="cannot convert set_iterator to JSON"):
        compile_template("x: {{ $json.x }}").render(scope)


def test_a_huge_integer_cannot_be_rendered_as_text() -> None:
    with pytest.raises(ExpressionEvalError, match="number is too large to render as text"):
        render("{{ " + "9" * 3000 + " * " + "9" * 3000 + " }} !")


def test_self_referencing_data_cannot_be_rendered_as_text() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(ExpressionEvalError, match="cannot convert object to JSON"):
        compile_template("x {{ $json }}").render(DictScope({"$json": loop}))


# -- errors at render time --------------------------------------------------------------


def test_an_evaluation_error_propagates_from_render() -> None:
    with pytest.raises(ExpressionEvalError, match=r"^field 'nope' not found in \$json "):
        render("Hi {{ $json.nope }}")


def test_the_first_failing_expression_stops_the_render() -> None:
    with pytest.raises(ExpressionEvalError, match="division by zero"):
        render("{{ 1 / 0 }} {{ $json.nope }}")


def test_a_node_whose_main_output_did_not_fire_is_reported_in_text() -> None:
    scope = DictScope({}, {"IF": NodeOutput("IF", MISSING, {"false": 1})})
    with pytest.raises(ExpressionEvalError, match="node 'IF' produced no value on its main"):
        compile_template("x {{ $('IF').item.json }}").render(scope)


# -- the compiled objects ---------------------------------------------------------------


def test_a_template_keeps_its_source() -> None:
    assert compile_template("Hi {{ $json.name }}").source == "Hi {{ $json.name }}"


def test_a_template_lists_its_expressions() -> None:
    template = compile_template("{{ 1 }} and {{ $('Set').item.json.id }}")
    assert [e.source for e in template.expressions] == ["{{ 1 }}", "{{ $('Set').item.json.id }}"]
    assert all(isinstance(e, Expression) for e in template.expressions)


def test_the_same_text_compiles_to_the_same_template() -> None:
    assert compile_template("{{ $json.a }}") is compile_template("{{ $json.a }}")


def test_a_template_renders_many_times_against_different_scopes() -> None:
    template = compile_template("{{ $json.n * 2 }}")
    assert [template.render(DictScope({"$json": {"n": n}})) for n in range(3)] == [0, 2, 4]


def test_a_template_is_a_template() -> None:
    assert isinstance(compile_template("x"), Template)
    assert repr(compile_template("x")) == "Template('x')"


def test_expression_render_and_evaluate_agree() -> None:
    expression = compile_expression("$('Set').item.json.id + 1")
    assert expression.render(SCOPE) == expression.evaluate(SCOPE) == 8
    assert repr(expression) == "Expression(\"$('Set').item.json.id + 1\")"


def test_a_template_references_nodes_from_all_its_expressions() -> None:
    template = compile_template("{{ $('A').item.json }} {{ $('B').outputs }} {{ $json }}")
    assert template.references == frozenset({"A", "B"})
    assert template.roots == frozenset({"$", "$json"})
    assert template.uses_input


def test_dict_scope_lookup_raises_key_error_for_unknown_names() -> None:
    with pytest.raises(KeyError):
        DictScope({}).lookup("$json")


def test_dict_scope_reports_a_missing_node_with_the_nodes_it_has() -> None:
    with pytest.raises(ExpressionEvalError, match=r"^no node named 'X' has run before this one"):
        SCOPE.node("X")


def test_node_output_defaults_to_no_value_and_no_ports() -> None:
    output = NodeOutput("A")
    assert output.json is MISSING
    assert output.outputs == {}


def test_missing_is_a_singleton_that_survives_copying() -> None:
    import copy
    import pickle

    assert copy.deepcopy(MISSING) is MISSING
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING
    assert repr(MISSING) == "MISSING"
