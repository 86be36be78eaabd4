"""The shared condition semantics used by Conditional, Switch and Filter."""

from __future__ import annotations

import time
from typing import Any

import pytest

from nodeloom.conditions import (
    OPERATORS,
    UNARY_OPERATORS,
    as_number,
    check_condition,
    evaluate_condition,
    resolve_path,
)
from nodeloom.errors import NodeError

USER = {
    "name": "Ada Lovelace",
    "age": 36,
    "score": "97.5",
    "active": True,
    "nickname": None,
    "tags": ["math", "Poetry"],
    "address": {"city": "London", "zip": ""},
    "items": [{"name": "pen", "price": 2}, {"name": "ink", "price": 5}],
    "empty_list": [],
    "empty_object": {},
}


def holds(operator: str, field: str | None = None, value: Any = None, **extra: Any) -> bool:
    condition = {"field": field, "operator": operator, "value": value, **extra}
    return evaluate_condition(condition, USER)


def condition_error(operator: str, field: str | None, value: Any, subject: Any) -> NodeError:
    with pytest.raises(NodeError) as caught:
        evaluate_condition({"field": field, "operator": operator, "value": value}, subject)
    assert caught.value.code == "condition_error"
    assert caught.value.retryable is False
    return caught.value


# --- the operator list -------------------------------------------------------------------


def test_the_operator_names_are_the_public_contract() -> None:
    assert OPERATORS == (
        "equals",
        "notEquals",
        "contains",
        "notContains",
        "startsWith",
        "endsWith",
        "greaterThan",
        "lessThan",
        "exists",
        "notExists",
        "isEmpty",
        "isNotEmpty",
        "regex",
    )
    assert set(OPERATORS) >= UNARY_OPERATORS


@pytest.mark.parametrize("operator", OPERATORS)
def test_every_operator_evaluates_to_a_boolean(operator: str) -> None:
    assert isinstance(holds(operator, "age", "3"), bool)


# --- paths -------------------------------------------------------------------------------


def test_a_dotted_path_reaches_into_nested_objects() -> None:
    assert resolve_path(USER, "address.city") == (True, "London")


def test_a_numeric_step_indexes_a_list() -> None:
    assert resolve_path(USER, "items.1.name") == (True, "ink")


def test_an_empty_field_is_the_value_itself() -> None:
    assert resolve_path(USER, "") == (True, USER)
    assert resolve_path(USER, None) == (True, USER)
    assert evaluate_condition({"operator": "equals", "value": "x"}, "x")


def test_a_path_that_does_not_resolve_is_reported_as_missing() -> None:
    assert resolve_path(USER, "address.country") == (False, None)
    assert resolve_path(USER, "items.9.name") == (False, None)
    assert resolve_path(USER, "items.first") == (False, None)
    assert resolve_path(USER, "name.first") == (False, None)


def test_a_path_to_null_resolves() -> None:
    assert resolve_path(USER, "nickname") == (True, None)


def test_surrounding_whitespace_in_a_field_is_ignored() -> None:
    assert holds("equals", " address.city ", "London")


# --- equals / notEquals ------------------------------------------------------------------


def test_equals_compares_strings_exactly_by_default() -> None:
    assert holds("equals", "address.city", "London")
    assert not holds("equals", "address.city", "london")


def test_equals_ignores_case_when_case_sensitive_is_false() -> None:
    assert holds("equals", "address.city", "LONDON", caseSensitive=False)


def test_equals_treats_a_number_and_its_numeric_string_as_equal() -> None:
    assert holds("equals", "age", "36")
    assert holds("equals", "score", 97.5)
    assert holds("equals", "age", 36.0)


def test_equals_does_not_compare_two_strings_numerically() -> None:
    assert not evaluate_condition({"operator": "equals", "value": "1"}, "1.0")


def test_equals_never_treats_a_boolean_as_a_number() -> None:
    assert holds("equals", "active", True)
    assert not holds("equals", "active", 1)
    assert not evaluate_condition({"operator": "equals", "value": True}, 1)
    assert not evaluate_condition({"operator": "equals", "value": "true"}, True)


def test_equals_compares_lists_and_objects_deeply() -> None:
    assert holds("equals", "tags", ["math", "Poetry"])
    assert holds("equals", "items.0", {"name": "pen", "price": 2})
    assert not holds("equals", "items.0", {"name": "pen", "price": True})


def test_a_missing_field_equals_null() -> None:
    assert holds("equals", "address.country", None)
    assert holds("equals", "nickname", None)
    assert not holds("equals", "address.country", "")


def test_not_equals_is_the_negation_of_equals() -> None:
    assert holds("notEquals", "address.city", "Paris")
    assert not holds("notEquals", "address.city", "London")
    assert not holds("notEquals", "address.city", "LONDON", caseSensitive=False)


def test_a_missing_operator_means_equals() -> None:
    assert evaluate_condition({"field": "age", "value": 36}, USER)
    assert evaluate_condition({"field": "age", "operator": "", "value": 36}, USER)


# --- contains / notContains --------------------------------------------------------------


def test_contains_on_a_string_is_a_substring_test() -> None:
    assert holds("contains", "name", "Love")
    assert not holds("contains", "name", "love")
    assert holds("contains", "name", "LOVE", caseSensitive=False)


def test_contains_on_a_list_is_membership() -> None:
    assert holds("contains", "tags", "math")
    assert not holds("contains", "tags", "mat")
    assert not holds("contains", "tags", "poetry")
    assert holds("contains", "tags", "poetry", caseSensitive=False)


def test_contains_on_a_list_of_objects_matches_a_whole_item() -> None:
    assert holds("contains", "items", {"name": "ink", "price": 5})
    assert not holds("contains", "items", {"name": "ink"})


def test_contains_on_a_list_of_numbers_accepts_a_numeric_string() -> None:
    assert evaluate_condition({"operator": "contains", "value": "2"}, [1, 2, 3])


def test_contains_on_an_object_tests_its_keys() -> None:
    assert holds("contains", "address", "city")
    assert not holds("contains", "address", "London")
    assert holds("contains", "address", "CITY", caseSensitive=False)


def test_contains_reads_a_number_as_its_text() -> None:
    assert evaluate_condition({"operator": "contains", "value": 23}, 1234)
    assert evaluate_condition({"operator": "contains", "value": "23"}, 1234)


def test_contains_on_a_missing_field_is_false_and_not_contains_true() -> None:
    assert not holds("contains", "address.country", "x")
    assert holds("notContains", "address.country", "x")


def test_not_contains_is_the_negation_of_contains() -> None:
    assert holds("notContains", "tags", "history")
    assert not holds("notContains", "name", "Ada")


def test_contains_on_a_string_needs_a_text_value() -> None:
    error = condition_error("contains", "name", None, USER)
    assert str(error) == (
        "Condition 'contains' on field 'name' needs text, "
        "but the value to compare with is null (null)."
    )


# --- startsWith / endsWith ---------------------------------------------------------------


def test_starts_with_and_ends_with_test_the_ends_of_a_string() -> None:
    assert holds("startsWith", "name", "Ada")
    assert holds("endsWith", "name", "lace")
    assert not holds("startsWith", "name", "ada")
    assert holds("startsWith", "name", "ada", caseSensitive=False)
    assert holds("endsWith", "name", "LACE", caseSensitive=False)


def test_starts_with_reads_a_number_as_its_text() -> None:
    assert evaluate_condition({"operator": "startsWith", "value": 44}, 447700900123)


def test_starts_with_on_a_missing_field_is_false() -> None:
    assert not holds("startsWith", "address.country", "U")
    assert not holds("endsWith", "nickname", "x")


def test_starts_with_on_a_list_raises_naming_the_field_and_the_value() -> None:
    error = condition_error("startsWith", "tags", "m", USER)
    assert str(error) == (
        "Condition 'startsWith' on field 'tags' needs text, "
        'but received ["math", "Poetry"] (list).'
    )
    assert error.details == {"field": "tags", "operator": "startsWith"}


# --- greaterThan / lessThan --------------------------------------------------------------


def test_greater_than_and_less_than_compare_numbers() -> None:
    assert holds("greaterThan", "age", 30)
    assert not holds("greaterThan", "age", 36)
    assert holds("lessThan", "age", 36.5)
    assert not holds("lessThan", "age", 36)


def test_numeric_strings_are_compared_numerically() -> None:
    assert holds("greaterThan", "score", "100") is False
    assert holds("greaterThan", "score", 9)
    assert holds("lessThan", "age", "100")
    assert evaluate_condition({"operator": "greaterThan", "value": " 1e3 "}, "1001")


def test_greater_than_on_a_missing_or_null_field_is_false() -> None:
    assert not holds("greaterThan", "address.country", 1)
    assert not holds("lessThan", "nickname", 1)


def test_greater_than_on_a_non_numeric_field_raises_naming_field_operator_and_value() -> None:
    error = condition_error("greaterThan", "name", 3, USER)
    assert str(error) == (
        "Condition 'greaterThan' on field 'name' needs numbers (or numeric strings), "
        'but received "Ada Lovelace" (string).'
    )


def test_less_than_with_a_non_numeric_value_raises_naming_the_value() -> None:
    error = condition_error("lessThan", "age", "old", USER)
    assert str(error) == (
        "Condition 'lessThan' on field 'age' needs numbers (or numeric strings), "
        'but the value to compare with is "old" (string).'
    )


def test_a_boolean_is_not_a_number_for_comparisons() -> None:
    error = condition_error("greaterThan", "active", 0, USER)
    assert "but received true (boolean)" in str(error)


def test_the_whole_value_is_named_when_there_is_no_field() -> None:
    error = condition_error("lessThan", "", 3, {"a": 1})
    assert str(error).startswith("Condition 'lessThan' on the value itself (no field) needs")


# --- exists / notExists / isEmpty / isNotEmpty -------------------------------------------


def test_exists_means_the_path_resolves_to_a_non_null_value() -> None:
    assert holds("exists", "address.zip")
    assert holds("exists", "empty_list")
    assert not holds("exists", "nickname")
    assert not holds("exists", "address.country")


def test_not_exists_is_the_negation_of_exists() -> None:
    assert holds("notExists", "nickname")
    assert holds("notExists", "address.country")
    assert not holds("notExists", "age")


@pytest.mark.parametrize(
    "field", ["nickname", "address.country", "address.zip", "empty_list", "empty_object"]
)
def test_is_empty_holds_for_null_missing_empty_text_list_and_object(field: str) -> None:
    assert holds("isEmpty", field)
    assert not holds("isNotEmpty", field)


@pytest.mark.parametrize("value", [0, False, " ", [None], {"a": None}])
def test_zero_false_whitespace_and_non_empty_containers_are_not_empty(value: Any) -> None:
    assert not evaluate_condition({"operator": "isEmpty"}, value)
    assert evaluate_condition({"operator": "isNotEmpty"}, value)


def test_unary_operators_ignore_the_value() -> None:
    assert holds("exists", "age", "anything")


# --- regex -------------------------------------------------------------------------------


def test_regex_searches_anywhere_in_the_text() -> None:
    assert holds("regex", "name", r"Love\w+")
    assert not holds("regex", "name", r"^Love")
    assert holds("regex", "name", r"^ada", caseSensitive=False)
    assert not holds("regex", "name", r"^ada")


def test_regex_reads_a_number_as_its_text() -> None:
    assert holds("regex", "age", r"^\d{2}$")


def test_regex_on_a_missing_field_is_false() -> None:
    assert not holds("regex", "nickname", ".*")


def test_an_invalid_regex_raises_naming_the_pattern() -> None:
    error = condition_error("regex", "name", "(Ada", USER)
    assert str(error).startswith(
        "Invalid regular expression \"(Ada\" in condition on field 'name': missing )"
    )
    assert error.details["pattern"] == "(Ada"


def test_a_backreference_is_refused_with_the_reason_and_the_rewrite() -> None:
    error = condition_error("regex", "name", r"(a)\1", USER)
    assert "invalid escape sequence" in str(error)
    assert "RE2" in str(error) and "backreferences" in str(error)


def test_a_catastrophic_pattern_answers_at_once() -> None:
    started = time.perf_counter()
    assert not evaluate_condition(
        {"field": "text", "operator": "regex", "value": "(a+)+$"}, {"text": "a" * 40 + "!"}
    )
    assert time.perf_counter() - started < 0.5


def test_the_static_check_refuses_lookaround() -> None:
    [(field, message)] = check_condition({"field": "x", "operator": "regex", "value": "a(?=b)"})
    assert field == "value" and "lookaround" in message


def test_an_invalid_regex_raises_even_when_the_field_is_missing() -> None:
    error = condition_error("regex", "nickname", "[", USER)
    assert 'Invalid regular expression "["' in str(error)


# --- errors ------------------------------------------------------------------------------


def test_an_unknown_operator_lists_the_valid_ones_with_a_suggestion() -> None:
    error = condition_error("equal", "name", "Ada", USER)
    assert str(error) == (
        "Unknown condition operator \"equal\". Did you mean 'equals'? Valid operators: "
        "equals, notEquals, contains, notContains, startsWith, endsWith, greaterThan, "
        "lessThan, exists, notExists, isEmpty, isNotEmpty, regex."
    )


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [("greaterthan", "greaterThan"), (">", "greaterThan"), ("!=", "notEquals")],
)
def test_the_suggestion_catches_wrong_case_and_symbols(typed: str, suggested: str) -> None:
    assert f"Did you mean '{suggested}'?" in str(condition_error(typed, "age", 1, USER))


def test_an_unknown_operator_far_from_any_name_gets_no_suggestion() -> None:
    message = str(condition_error("xyzzy", "age", 1, USER))
    assert "Did you mean" not in message
    assert "Valid operators: equals" in message


def test_a_non_boolean_case_sensitive_flag_raises() -> None:
    with pytest.raises(NodeError, match=r"caseSensitive must be true or false; received \"no\""):
        holds("equals", "name", "Ada", caseSensitive="no")


def test_a_non_text_field_raises() -> None:
    with pytest.raises(NodeError, match="A condition's field must be a dotted path"):
        evaluate_condition({"field": 3, "operator": "exists"}, USER)


def test_a_long_received_value_is_truncated_in_the_message() -> None:
    error = condition_error("greaterThan", "", 1, "x" * 500)
    assert len(str(error)) < 200
    assert "…" in str(error)


# --- numbers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "number"),
    [("42", 42), ("-7", -7), ("+3", 3), (" 1.5 ", 1.5), ("1e3", 1000.0), (".5", 0.5)],
)
def test_numeric_strings_are_read_as_numbers(text: str, number: float) -> None:
    assert as_number(text) == number


@pytest.mark.parametrize("text", ["", "abc", "1_000", "0x1F", "nan", "inf", "1,5", "1 2"])
def test_other_strings_are_not_numbers(text: str) -> None:
    assert as_number(text) is None


# --- check_condition ---------------------------------------------------------------------


def test_a_valid_condition_has_no_issues() -> None:
    assert check_condition({"field": "age", "operator": "greaterThan", "value": 3}) == []
    assert check_condition({"field": "age", "operator": "exists"}) == []
    assert check_condition({"field": "nickname", "operator": "equals", "value": None}) == []


def test_check_reports_an_unknown_operator_on_the_operator_field() -> None:
    [(field, message)] = check_condition({"operator": "startswith", "value": "a"})
    assert field == "operator"
    assert "Did you mean 'startsWith'?" in message


@pytest.mark.parametrize(
    "operator",
    ["contains", "notContains", "startsWith", "endsWith", "greaterThan", "lessThan", "regex"],
)
def test_check_reports_a_missing_value_for_operators_that_need_one(operator: str) -> None:
    assert check_condition({"field": "a", "operator": operator}) == [
        ("value", f"The operator '{operator}' needs a value.")
    ]


def test_check_reports_an_invalid_regex_pattern() -> None:
    [(field, message)] = check_condition({"operator": "regex", "value": "(a"})
    assert field == "value"
    assert message.startswith('Invalid regular expression "(a": missing )')


def test_check_reports_a_non_numeric_comparison_value() -> None:
    assert check_condition({"operator": "lessThan", "value": "soon"}) == [
        ("value", "The operator 'lessThan' compares numbers; \"soon\" (string) is not a number.")
    ]


def test_check_skips_values_that_hold_an_expression() -> None:
    assert check_condition({"operator": "regex", "value": "{{ $vars.pattern }}"}) == []
    assert check_condition({"operator": "lessThan", "value": "{{ $vars.limit }}"}) == []
    assert check_condition({"operator": "{{ $vars.op }}", "value": None}) == []


def test_check_reports_a_bad_case_sensitive_flag_and_a_bad_field() -> None:
    assert check_condition({"field": 1, "operator": "exists", "caseSensitive": "yes"}) == [
        ("field", "The field must be a dotted path such as 'user.address.city'."),
        ("caseSensitive", "caseSensitive must be true or false."),
    ]


def test_check_prefixes_fields_for_conditions_inside_a_parameter() -> None:
    assert check_condition({"operator": "contains"}, prefix="cases[1].") == [
        ("cases[1].value", "The operator 'contains' needs a value.")
    ]
    assert check_condition("equals", prefix="cases[2].") == [
        ("cases[2]", "A condition must be an object {field, operator, value, caseSensitive}.")
    ]
