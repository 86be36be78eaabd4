"""Parsing: what compiles, what each compiled template knows statically, and syntax errors."""

from __future__ import annotations

import pytest

from nodeloom.errors import ExpressionSyntaxError
from nodeloom.expressions import compile_expression, compile_template
from nodeloom.expressions.parser import MAX_NESTING, MAX_TREE_DEPTH
from nodeloom.expressions.template import MAX_TEMPLATE_LENGTH


def syntax_error(text: str) -> str:
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_template(text)
    return str(caught.value)


# -- what a template knows before it runs ------------------------------------------------


def test_references_list_every_node_named_in_dollar_calls() -> None:
    template = compile_template("{{ $('HTTP Request').item.json.id }} {{ $(\"Set\").outputs }}")
    assert template.references == frozenset({"HTTP Request", "Set"})


def test_references_are_empty_without_dollar_calls() -> None:
    assert compile_template("{{ $json.a }}").references == frozenset()


def test_roots_name_each_root_used() -> None:
    template = compile_template("{{ $json.a }} {{ $trigger.b }} {{ $vars.c }} {{ $loop.index }}")
    assert template.roots == frozenset({"$json", "$trigger", "$vars", "$loop"})


def test_a_node_reference_counts_as_the_dollar_root() -> None:
    assert compile_template("{{ $('A').item.json }}").roots == frozenset({"$"})


def test_input_is_recorded_as_the_json_root() -> None:
    template = compile_template("{{ input.name }}")
    assert template.roots == frozenset({"$json"})
    assert template.uses_input


def test_uses_input_is_false_when_only_other_roots_are_used() -> None:
    assert not compile_template("{{ $vars.url }} {{ $('A').item.json }}").uses_input


def test_names_inside_function_arguments_and_fallbacks_are_found() -> None:
    template = compile_template("{{ lower($json.a ?? $('B').item.json.name) }}")
    assert template.references == frozenset({"B"})
    assert template.roots == frozenset({"$json", "$"})


def test_plain_text_has_no_references_or_roots() -> None:
    template = compile_template("just text")
    assert template.references == frozenset()
    assert template.roots == frozenset()
    assert not template.uses_input


def test_compile_expression_reports_the_same_static_facts() -> None:
    expression = compile_expression("$('Set').outputs.main.x > $json.limit")
    assert expression.references == frozenset({"Set"})
    assert expression.roots == frozenset({"$", "$json"})
    assert expression.uses_input


# -- syntax errors name the problem, the column and the expression ------------------------


def test_an_unexpected_token_is_named_with_its_column_and_the_expression() -> None:
    assert syntax_error("{{ $json.a) }}") == "unexpected ')' at column 11 in {{ $json.a) }}"


def test_columns_count_from_the_start_of_the_whole_text() -> None:
    assert "at column 15 in {{ 1 + }}" in syntax_error("Total: {{ 1 + }}")


def test_multi_line_text_reports_line_and_column() -> None:
    assert "at line 2, column 8" in syntax_error("Dear\n{{ 1 + }}")


def test_an_empty_expression_is_an_error() -> None:
    assert syntax_error("{{ }}").startswith("empty expression at column 4 in {{ }}")


def test_an_unclosed_expression_is_an_error_that_explains_literal_braces() -> None:
    message = syntax_error("Hello {{ $json.name")
    assert message.startswith("unclosed '{{' at column 7 in {{ $json.name")
    assert "to write literal braces use {{ '{{' }}" in message


def test_an_unbalanced_object_is_pointed_out_when_the_expression_is_unclosed() -> None:
    assert "check that every { in it has its }" in syntax_error("{{ {a: 1 }}")


def test_an_unknown_name_lists_the_names_available() -> None:
    message = syntax_error("{{ foo }}")
    assert message.startswith("unknown name 'foo' at column 4")
    assert (
        "names available: $json, input, $trigger, $vars, $loop, $run, $credentials, "
        "$('Node name')" in message
    )


def test_an_unknown_name_suggests_a_close_root() -> None:
    assert "did you mean $json?" in syntax_error("{{ $jsno.a }}")


def test_legacy_dollar_node_points_to_the_dollar_call() -> None:
    assert "write $('Node name').item.json" in syntax_error("{{ $node.x }}")


def test_a_function_name_without_parentheses_suggests_the_root_it_resembles() -> None:
    message = syntax_error("{{ json.a }}")
    assert message.startswith("'json' is a function: call it with ()")
    assert "did you mean $json?" in message


def test_an_unknown_function_suggests_a_close_one_and_lists_all() -> None:
    message = syntax_error("{{ lenght($json) }}")
    assert message.startswith("unknown function 'lenght' at column 4")
    assert "did you mean len()?" in message
    assert "functions available: abs, bool, contains," in message


def test_a_wrong_argument_count_shows_the_usage() -> None:
    message = syntax_error("{{ replace('a', 'b') }}")
    assert message.startswith("replace() takes 3 arguments, got 2")
    assert message.endswith("usage: replace(text, old, new)")


def test_too_many_arguments_to_an_optional_argument_function_gives_the_range() -> None:
    assert "round() takes 1 to 2 arguments, got 3" in syntax_error("{{ round(1, 2, 3) }}")


def test_min_without_arguments_needs_at_least_one() -> None:
    assert "min() takes at least 1 argument, got 0" in syntax_error("{{ min() }}")


def test_methods_are_rejected_with_the_function_form_to_use_instead() -> None:
    message = syntax_error("{{ $json.name.lower() }}")
    assert message.startswith("only functions can be called at column 20")
    assert "write lower($json.name)" in message


def test_calling_a_non_function_value_is_rejected() -> None:
    assert "only functions can be called" in syntax_error("{{ $json.f(1) }}")


@pytest.mark.parametrize(
    "text",
    ["{{ $(x) }}", "{{ $('A' + 'B').item.json }}", "{{ $() }}", "{{ $.a }}", "{{ $(1) }}"],
)
def test_a_node_reference_must_be_a_single_quoted_name(text: str) -> None:
    assert "$() takes a node name in quotes, e.g. $('HTTP Request')" in syntax_error(text)


def test_a_node_reference_must_be_followed_by_item_json_or_outputs() -> None:
    message = syntax_error("{{ $('A').first() }}")
    assert message.startswith("expected .item.json or .outputs after $('A')")


def test_a_node_item_must_be_followed_by_json() -> None:
    assert "expected .json after $('A').item" in syntax_error("{{ $('A').item }}")


def test_a_number_after_a_dot_suggests_an_index() -> None:
    message = syntax_error("{{ $json.items.0 }}")
    assert "expected a field name after '.' but found '0'" in message
    assert "use [0] for list indexes" in message


def test_optional_chaining_is_explained() -> None:
    assert "'?.' is not supported" in syntax_error("{{ $json?.a }}")


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("{{ 1 === 1 }}", "use '=='"),
        ("{{ 1 !== 1 }}", "use '!='"),
        ("{{ $json.a = 1 }}", "use '==' to compare"),
        ("{{ true & false }}", "use '&&' or 'and'"),
        ("{{ true | false }}", "use '||' or 'or'"),
    ],
)
def test_operators_from_other_languages_get_a_hint(text: str, hint: str) -> None:
    assert hint in syntax_error(text)


def test_an_unknown_character_is_named() -> None:
    assert syntax_error("{{ 1 @ 2 }}").startswith("unexpected character '@' at column 6")


def test_chained_comparisons_are_rejected_with_the_and_form() -> None:
    message = syntax_error("{{ 1 < $json.a < 3 }}")
    assert message.startswith("cannot chain '<' and '<'")
    assert "a < b and b < c" in message


def test_chained_equality_is_rejected() -> None:
    assert "cannot chain '==' and '!='" in syntax_error("{{ 1 == 1 != 2 }}")


def test_a_comparison_compared_for_equality_is_allowed() -> None:
    compile_template("{{ 1 < 2 == true }}")


def test_an_unclosed_array_points_at_its_opening_bracket() -> None:
    message = syntax_error("{{ [1, 2 }}")
    assert message.startswith("expected ',' or ']' but found end of expression at column 10")
    assert message.endswith("the '[' at column 4 is still open")


def test_missing_commas_in_a_call_are_reported() -> None:
    assert "expected ',' or ')' but found '2'" in syntax_error("{{ max(1 2) }}")


def test_an_unclosed_parenthesis_is_reported() -> None:
    message = syntax_error("{{ (1 + 2 }}")
    assert message.startswith("expected ')' but found end of expression")
    assert "to close the '(' at column 4" in message


def test_object_keys_must_be_names_or_strings() -> None:
    message = syntax_error("{{ {1: 2} }}")
    assert message.startswith("expected a field name but found '1'")
    assert "object keys are names or strings in quotes" in message


def test_a_ternary_without_a_colon_is_reported() -> None:
    assert "expected ':' but found end of expression" in syntax_error("{{ true ? 1 }}")


def test_an_operator_without_a_right_side_is_reported() -> None:
    assert syntax_error("{{ 1 + }}").startswith("unexpected end of expression at column 8")


def test_a_keyword_operator_where_a_value_belongs_is_unexpected() -> None:
    assert syntax_error("{{ and 1 }}").startswith("unexpected 'and' at column 4")


def test_an_unterminated_string_points_at_its_start() -> None:
    assert syntax_error("{{ 'abc }}").startswith("unterminated string (no closing ') at column 4")


def test_an_unknown_escape_is_an_error() -> None:
    message = syntax_error(r"{{ 'a\d' }}")
    assert message.startswith(r"unknown escape '\\d' at column 6")


def test_a_bad_unicode_escape_is_an_error() -> None:
    assert "invalid \\u escape" in syntax_error(r"{{ '\u12' }}")


def test_a_lone_surrogate_escape_is_an_error() -> None:
    assert "lone surrogate" in syntax_error(r"{{ '\ud83d' }}")


def test_a_number_glued_to_letters_is_invalid() -> None:
    assert syntax_error("{{ 12px }}").startswith("invalid number '12p'")


def test_long_snippets_are_shortened_in_messages() -> None:
    message = syntax_error("{{ " + "1 + " * 40 + " }}")
    assert "..." in message
    assert len(message) < 200


# -- limits against pathological input --------------------------------------------------


def test_nesting_deeper_than_the_limit_is_rejected() -> None:
    deep = "(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1)
    message = syntax_error("{{ " + deep + " }}")
    assert message.startswith(f"expression is nested too deeply (over {MAX_NESTING} levels)")


def test_nesting_up_to_the_limit_is_accepted() -> None:
    depth = MAX_NESTING - 1
    compile_template("{{ " + "(" * depth + "1" + ")" * depth + " }}")


@pytest.mark.parametrize("opener", ["!", "-", "not ", "[", "len(", "true ? 1 : "])
def test_every_kind_of_nesting_counts_toward_the_limit(opener: str) -> None:
    text = "{{ " + opener * 200 + "1 }}"
    assert "nested too deeply" in syntax_error(text)


def test_nested_objects_count_toward_the_limit() -> None:
    text = "{{ " + "{a: " * 200 + "1" + "}" * 200 + " }}"
    assert "nested too deeply" in syntax_error(text)


def test_a_very_long_operator_chain_is_rejected_as_too_complex() -> None:
    message = syntax_error("{{ " + "1 + " * (MAX_TREE_DEPTH + 5) + "1 }}")
    assert message.startswith(f"expression is too complex (more than {MAX_TREE_DEPTH}")


def test_a_template_longer_than_the_limit_is_rejected() -> None:
    text = "{{ 1 }}" + "x" * MAX_TEMPLATE_LENGTH
    assert syntax_error(text).startswith("text with expressions is too long")


def test_long_text_without_expressions_is_not_limited() -> None:
    text = "x" * (MAX_TEMPLATE_LENGTH + 1)
    assert compile_template(text).source == text


def test_a_string_with_many_escapes_lexes_quickly() -> None:
    text = "{{ '" + "\\n" * 40_000 + "' }}"
    assert compile_template(text).is_single


# -- compile_expression -------------------------------------------------------------------


def test_compile_expression_reports_columns_within_the_expression() -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        compile_expression("$json.a)")
    assert str(caught.value) == "unexpected ')' at column 8 in $json.a)"


def test_compile_expression_rejects_empty_text() -> None:
    with pytest.raises(ExpressionSyntaxError, match=r"^empty expression at column 1;"):
        compile_expression("")


def test_compile_expression_accepts_text_wrapped_in_one_pair_of_braces() -> None:
    assert compile_expression("{{ $json.done }}").roots == frozenset({"$json"})


def test_compile_expression_rejects_text_with_several_expressions() -> None:
    with pytest.raises(ExpressionSyntaxError, match="expected one expression, got text with 2"):
        compile_expression("{{ 1 }} and {{ 2 }}")
