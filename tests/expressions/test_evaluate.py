"""Evaluation: literals, roots, paths, operators, `??`, node references and functions."""

from __future__ import annotations

import pickle
import re
from typing import Any

import pytest

from nodeloom.errors import ExpressionEvalError
from nodeloom.expressions import MISSING, DictScope, NodeOutput, compile_expression
from nodeloom.expressions.functions import MAX_TEXT_LENGTH
from nodeloom.expressions.scope import Scope

DATA = {
    "a": {"x": 1, "y": 2},
    "items": [10, 20],
    "name": "Ada",
    "empty": None,
    "users": [{"name": "Bo", "age": 30}],
    "flag": True,
    "count": 3,
}
NODES = {
    "HTTP Request": NodeOutput("HTTP Request", {"status": 200}, {"main": {"status": 200}}),
    "Approve": NodeOutput("Approve", MISSING, {"reject": {"reason": "late"}}),
}


def scope(**names: Any) -> DictScope:
    return DictScope({"$json": DATA, "$vars": {"region": "eu"}, **names}, NODES)


def run(source: str, where: Scope | None = None) -> Any:
    return compile_expression(source).evaluate(where or scope())


def failure(source: str, where: Scope | None = None) -> str:
    with pytest.raises(ExpressionEvalError) as caught:
        run(source, where)
    return str(caught.value)


# -- literals ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("42", 42),
        ("3.5", 3.5),
        ("1e3", 1000.0),
        ("2.5E-1", 0.25),
        ("-7", -7),
        ("'single'", "single"),
        ('"double"', "double"),
        ("true", True),
        ("false", False),
        ("null", None),
        ("[1, 'two', null]", [1, "two", None]),
        ("[1, 2,]", [1, 2]),
        ("[]", []),
        ('{"a": 1, b: 2}', {"a": 1, "b": 2}),
        ("{}", {}),
        ("{in: 1, null: 2}", {"in": 1, "null": 2}),
    ],
)
def test_literals_evaluate_to_their_values(source: str, value: Any) -> None:
    assert run(source) == value
    assert type(run(source)) is type(value)


@pytest.mark.parametrize(
    ("source", "value"),
    [
        (r"'a\nb'", "a\nb"),
        (r"'a\tb'", "a\tb"),
        (r"'it\'s'", "it's"),
        (r'"say \"hi\""', 'say "hi"'),
        (r"'back\\slash'", "back\\slash"),
        (r"'caf\u00e9'", "café"),
        (r"'\ud83d\ude00'", "\U0001f600"),
    ],
)
def test_string_escapes_are_decoded(source: str, value: str) -> None:
    assert run(source) == value


def test_array_and_object_literals_build_a_fresh_value_each_time() -> None:
    expression = compile_expression("{items: [1]}")
    first = expression.evaluate(scope())
    first["items"].append(2)
    assert expression.evaluate(scope()) == {"items": [1]}


# -- roots and paths --------------------------------------------------------------------


def test_json_reads_the_input() -> None:
    assert run("$json.name") == "Ada"


def test_input_is_an_alias_of_json() -> None:
    assert run("input.a.x") == 1


def test_other_roots_come_from_the_scope() -> None:
    assert run("$vars.region") == "eu"
    assert run("$loop.index", scope(**{"$loop": {"index": 4}})) == 4


def test_an_unavailable_root_lists_the_roots_the_scope_has() -> None:
    message = failure("$trigger.body")
    assert message == "$trigger is not available here (available: $json, input, $vars); " + (
        "$trigger holds what started the run"
    )


def test_loop_outside_a_loop_says_where_it_exists() -> None:
    assert failure("$loop.index").endswith("$loop exists only inside a Loop body")


def test_a_root_holding_missing_is_a_missing_value() -> None:
    assert failure("$json.a", DictScope({"$json": MISSING})) == "$json has no value here"


def test_index_reads_lists_from_either_end() -> None:
    assert run("$json.items[0]") == 10
    assert run("$json.items[-1]") == 20


def test_index_with_an_expression_and_a_string_key() -> None:
    assert run("$json.items[$json.a.x]") == 20
    assert run("$json['name']") == "Ada"


def test_an_integral_float_index_is_accepted() -> None:
    assert run("$json.items[2 / 2]") == 20


def test_length_of_strings_and_lists() -> None:
    assert run("$json.name.length") == 3
    assert run("$json.items.length") == 2


def test_length_on_an_object_is_an_ordinary_field() -> None:
    assert run("$json.length", DictScope({"$json": {"length": "long"}})) == "long"


def test_a_missing_field_names_the_path_and_the_fields_available() -> None:
    assert failure("$json.a.b") == "field 'b' not found in $json.a (available fields: x, y)"


def test_a_missing_field_suggests_a_close_name() -> None:
    assert failure("$json.nmae").endswith("did you mean 'name'?")


def test_a_missing_field_of_an_empty_object_says_so() -> None:
    message = failure("$json.a", DictScope({"$json": {}}))
    assert message == "field 'a' not found in $json (it has no fields)"


def test_a_long_field_list_is_cut_short() -> None:
    wide = {f"f{n}": n for n in range(30)}
    assert "... (10 more)" in failure("$json.nope", DictScope({"$json": wide}))


def test_a_field_of_null_names_the_null_path() -> None:
    assert failure("$json.empty.b") == "cannot read field 'b' of null ($json.empty is null)"


def test_a_field_of_a_number_is_an_error() -> None:
    assert failure("$json.count.b") == "cannot read field 'b' of a number ($json.count is 3)"


def test_a_field_of_a_list_suggests_an_index() -> None:
    message = failure("$json.users.name")
    assert message.startswith("cannot read field 'name' of an array ($json.users is")
    assert message.endswith("e.g. $json.users[0].name")


def test_a_field_of_a_string_says_only_length_exists() -> None:
    assert "strings and arrays only have .length" in failure("$json.name.first")


def test_an_index_out_of_range_names_the_list_and_its_length() -> None:
    assert failure("$json.items[5]") == "index 5 out of range for $json.items (length 2)"


def test_an_index_of_null_names_the_null_path() -> None:
    assert failure("$json.empty[0]") == "cannot read [0] of null ($json.empty is null)"


def test_a_non_integer_index_into_a_list_is_an_error() -> None:
    message = failure("$json.items['0']")
    assert message == "an index into the array $json.items must be a whole number, got string '0'"


def test_a_number_key_into_an_object_suggests_a_string_key() -> None:
    assert "e.g. $json.a['0']" in failure("$json.a[0]")


def test_indexing_a_string_suggests_slice() -> None:
    assert failure("$json.name[0]").endswith("use slice(text, start, end) for part of a string")


def test_the_path_in_a_message_is_written_as_the_user_wrote_it() -> None:
    message = failure("$json.users[ 0 ].email")
    assert message.startswith("field 'email' not found in $json.users[ 0 ] (available")


def test_values_that_are_not_json_cannot_be_walked() -> None:
    class Secret:
        real = "hidden"

    message = failure("$json.real", DictScope({"$json": Secret()}))
    assert message == "cannot read field 'real' of a Secret ($json is <Secret>)"


# -- node references --------------------------------------------------------------------


def test_item_json_reads_another_nodes_main_output() -> None:
    assert run("$('HTTP Request').item.json.status") == 200


def test_outputs_reads_the_ports_that_fired() -> None:
    assert run("$('Approve').outputs.reject.reason") == "late"


def test_a_port_that_did_not_fire_lists_the_ports_that_did() -> None:
    message = failure("$('Approve').outputs.main")
    assert message == "field 'main' not found in $('Approve').outputs (available fields: reject)"


def test_item_json_of_a_node_whose_main_port_did_not_fire_is_an_error() -> None:
    assert failure("$('Approve').item.json") == (
        "node 'Approve' produced no value on its main output"
    )


def test_an_unknown_node_is_reported_by_the_scope() -> None:
    message = failure("$('Nope').item.json")
    assert message == "no node named 'Nope' has run before this one (nodes available: " + (
        "'Approve', 'HTTP Request')"
    )


def test_a_scope_raising_key_error_for_a_node_is_reported_clearly() -> None:
    class KeyErrorScope:
        def lookup(self, name: str) -> Any:
            raise KeyError(name)

        def node(self, ref: str) -> NodeOutput:
            raise KeyError(ref)

    assert failure("$('X').item.json", KeyErrorScope()) == "no node named 'X' is available here"


# -- operators --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 4 - 3", 3),
        ("7 % 3", 1),
        ("-7 % 3", 2),
        ("6 / 2", 3),
        ("7 / 2", 3.5),
        ("1.5 + 1", 2.5),
        ("-$json.count", -3),
        ("- -3", 3),
        ("'a' + 'b'", "ab"),
        ("[1] + [2, 3]", [1, 2, 3]),
    ],
)
def test_arithmetic(source: str, value: Any) -> None:
    result = run(source)
    assert result == value
    assert type(result) is type(value)


def test_integer_arithmetic_stays_integer() -> None:
    assert type(run("2 * 3 + 4 - 1")) is int
    assert type(run("9 / 3")) is int


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("1 == 1", True),
        ("1 == 1.0", True),
        ("'a' == 'a'", True),
        ("'1' == 1", False),
        ("true == 1", False),
        ("false == 0", False),
        ("null == null", True),
        ("null == false", False),
        ("[1, true] == [1, true]", True),
        ("[1] == [true]", False),
        ("{a: 1} == {a: 1}", True),
        ("{a: 1} == {a: 2}", False),
        ("1 != 2", True),
        ("true != 1", True),
        ("2 < 3", True),
        ("3 <= 3", True),
        ("'b' > 'a'", True),
        ("2.5 >= 3", False),
    ],
)
def test_comparisons(source: str, value: bool) -> None:
    assert run(source) is value


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("'da' in $json.name", True),
        ("20 in $json.items", True),
        ("true in [1]", False),
        ("'x' in $json.a", True),
        ("'z' in $json.a", False),
        ("1 in $json.a", False),
        ("3 not in $json.items", True),
    ],
)
def test_in_searches_strings_lists_and_object_keys(source: str, value: bool) -> None:
    assert run(source) is value


def test_and_or_return_the_deciding_operand() -> None:
    assert run("$json.empty || 'anonymous'") == "anonymous"
    assert run("$json.name or 'x'") == "Ada"
    assert run("$json.count && $json.name") == "Ada"
    assert run("0 and 1") == 0


def test_and_or_short_circuit() -> None:
    assert run("false && $json.missing.deep") is False
    assert run("true || $json.missing.deep") is True


def test_not_uses_python_truthiness() -> None:
    assert run("!''") is True
    assert run("not []") is True
    assert run("!{a: 1}") is False
    assert run("!0") is True


def test_the_ternary_picks_a_branch_and_nests_to_the_right() -> None:
    assert run("$json.count > 2 ? 'big' : 'small'") == "big"
    assert run("false ? 1 : true ? 2 : 3") == 2


def test_the_ternary_evaluates_only_the_chosen_branch() -> None:
    assert run("true ? 1 : $json.nope.deep") == 1


def test_adding_a_string_and_a_number_suggests_string() -> None:
    message = failure("'n=' + 1")
    assert message.startswith("cannot add a string and a number ('n=' + 1)")
    assert "string(x)" in message


def test_adding_objects_is_an_error() -> None:
    assert failure("{} + {}").startswith("cannot add an object and an object")


def test_arithmetic_on_text_suggests_number() -> None:
    message = failure("'3' * 2")
    assert message.startswith("'*' needs two numbers, got string and number ('3' * 2)")
    assert message.endswith("convert text with number(x)")


def test_booleans_are_not_numbers_in_arithmetic() -> None:
    assert failure("true + 1").startswith("cannot add a boolean and a number")


@pytest.mark.parametrize("source", ["1 / 0", "1 % 0", "1.5 / 0.0"])
def test_division_by_zero_is_an_error(source: str) -> None:
    assert failure(source).startswith("division by zero")


def test_overflowing_float_division_is_an_error() -> None:
    assert failure("1" + "0" * 400 + " / 3").startswith("number too large")


def test_negating_text_is_an_error() -> None:
    assert failure("-$json.name") == "'-' needs a number, got string 'Ada'"


def test_comparing_incompatible_types_names_both() -> None:
    message = failure("$json.name < 3")
    assert message.startswith("cannot compare a string with a number using '<' ('Ada' < 3)")


def test_comparing_null_is_an_error() -> None:
    assert failure("null > 1").startswith("cannot compare null with a number")


def test_in_with_a_number_on_the_right_is_an_error() -> None:
    message = failure("1 in 5")
    assert message == "'in' needs a string, array or object to search in, got number 5"


def test_in_a_string_needs_a_string() -> None:
    assert "needs a string to find, got number 1" in failure("1 in 'a1'")


# -- ?? and default ---------------------------------------------------------------------


def test_coalesce_falls_back_on_null() -> None:
    assert run("$json.empty ?? 'none'") == "none"


def test_coalesce_falls_back_on_a_missing_field_or_index() -> None:
    assert run("$json.nope ?? 1") == 1
    assert run("$json.a.b.c ?? 2") == 2
    assert run("$json.items[9] ?? 3") == 3
    assert run("$json.empty.deep ?? 4") == 4


def test_coalesce_falls_back_on_a_node_that_did_not_produce_output() -> None:
    assert run("$('Approve').item.json.ok ?? false") is False
    assert run("$('Never Ran').item.json ?? 'skipped'") == "skipped"


def test_coalesce_falls_back_on_an_unavailable_root() -> None:
    assert run("$loop.index ?? 0") == 0


def test_coalesce_keeps_falsy_values_that_are_not_null() -> None:
    assert run("0 ?? 1") == 0
    assert run("'' ?? 'x'") == ""
    assert run("false ?? true") is False


def test_coalesce_does_not_hide_other_errors() -> None:
    assert failure("$json.count.x ?? 1").startswith("cannot read field 'x' of a number")
    assert failure("(1 / 0) ?? 1").startswith("division by zero")


def test_coalesce_chains() -> None:
    assert run("$json.p ?? $json.q ?? 'last'") == "last"


def test_default_behaves_like_coalesce() -> None:
    assert run("default($json.nope, 'd')") == "d"
    assert run("default($json.name, 'd')") == "Ada"
    assert run("default(null, 5)") == 5


def test_a_missing_value_error_is_still_an_expression_eval_error_when_it_escapes() -> None:
    with pytest.raises(ExpressionEvalError) as caught:
        run("$json.nope")
    assert caught.value.code == "expression_eval"
    assert caught.value.to_json()["message"].startswith("field 'nope' not found")


def test_a_missing_value_error_survives_pickling() -> None:
    with pytest.raises(ExpressionEvalError) as caught:
        run("$json.nmae")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert str(copy) == str(caught.value)


# -- functions --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("len('abc')", 3),
        ("len([1, 2])", 2),
        ("len({a: 1})", 1),
        ("lower('AbC')", "abc"),
        ("upper('abc')", "ABC"),
        ("trim('  a b ')", "a b"),
        ("string(1.5)", "1.5"),
        ("string(true)", "true"),
        ("string(null)", "null"),
        ("string([1, 'a'])", '[1, "a"]'),
        ("string({a: 'é'})", '{"a": "é"}'),
        ("number('42')", 42),
        ("number(' -3 ')", -3),
        ("number('2.5')", 2.5),
        ("number('1e2')", 100.0),
        ("number(7)", 7),
        ("number(true)", 1),
        ("int('42')", 42),
        ("int('3.9')", 3),
        ("int(-2.7)", -2),
        ("int(false)", 0),
        ("bool('yes')", True),
        ("bool(' FALSE ')", False),
        ("bool('0')", False),
        ("bool('')", False),
        ("bool(0)", False),
        ("bool([1])", True),
        ("json('a')", '"a"'),
        ("json({a: [1, null]})", '{"a": [1, null]}'),
        ("parse_json('{\"a\": [1, 2]}')", {"a": [1, 2]}),
        ("keys({a: 1, b: 2})", ["a", "b"]),
        ("values({a: 1, b: 2})", [1, 2]),
        ("join(['a', 'b'])", "ab"),
        ("join(['a', 1, true, null], ', ')", "a, 1, true, null"),
        ("split('a,b,,c', ',')", ["a", "b", "", "c"]),
        ("split('abc', '')", ["a", "b", "c"]),
        ("replace('a-b-c', '-', '+')", "a+b+c"),
        ("contains('hello', 'ell')", True),
        ("contains([1, 2], 3)", False),
        ("contains({a: 1}, 'a')", True),
        ("starts_with('hello', 'he')", True),
        ("ends_with('hello', 'lo')", True),
        ("round(2.5)", 3),
        ("round(-2.5)", -3),
        ("round(2.675, 2)", 2.68),
        ("round(1234, -2)", 1200),
        ("round(7)", 7),
        ("round(1.23456789, 20)", 1.23456789),
        ("min(3, 1, 2)", 1),
        ("max([3, 9, 2])", 9),
        ("min('b', 'a')", "a"),
        ("abs(-4)", 4),
        ("sum([1, 2, 3.5])", 6.5),
        ("sum([])", 0),
        ("slice('hello', 1, 3)", "el"),
        ("slice([1, 2, 3], -2)", [2, 3]),
        ("slice('hello', 1, null)", "ello"),
        ("type('a')", "string"),
        ("type(1.5)", "number"),
        ("type(false)", "boolean"),
        ("type(null)", "null"),
        ("type([])", "array"),
        ("type({})", "object"),
    ],
)
def test_functions(source: str, value: Any) -> None:
    result = run(source)
    assert result == value
    assert type(result) is type(value)


def test_now_is_a_utc_iso_timestamp() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", run("now()"))


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("len(5)", "len() expects a string, array or object, got number 5"),
        ("lower(1)", "lower() expects a string, got number 1"),
        ("upper(null)", "upper() expects a string, got null"),
        ("trim([])", "trim() expects a string, got array []"),
        ("number('12abc')", "number() cannot read '12abc' as a number"),
        ("number('nan')", "number() cannot read 'nan' as a number"),
        ("number(null)", "number() expects a string, number or boolean, got null"),
        ("int('x')", "int() cannot read 'x' as a number"),
        ("int([])", "int() expects a string, number or boolean, got array []"),
        ("bool('maybe')", "bool() cannot read 'maybe' as a boolean; expected true/false"),
        ("parse_json('{')", "parse_json() could not parse the text: Expecting property name"),
        ("parse_json(1)", "parse_json() expects a string, got number 1"),
        ("keys([1])", "keys() expects an object, got array [1]"),
        ("values('a')", "values() expects an object, got string 'a'"),
        ("join('ab')", "join() expects an array, got string 'ab'"),
        ("join([1], 2)", "join() expects a string as the separator, got number 2"),
        ("split(1, ',')", "split() expects a string, got number 1"),
        ("replace('a', 1, 'b')", "replace() expects a string as the text to find, got number 1"),
        ("contains(1, 1)", "contains() needs a string, array or object to search in, got number 1"),
        ("contains('a', 1)", "contains() with a string to search needs a string to find"),
        ("starts_with('a', 1)", "starts_with() expects a string as the prefix, got number 1"),
        ("round('1')", "round() expects a number, got string '1'"),
        ("round(1.5, 0.5)", "round() expects a whole number as the number of digits"),
        ("min([])", "min() of an empty array has no value"),
        ("max(1, 'a')", "max() needs all numbers or all strings, got number and string"),
        ("abs('1')", "abs() expects a number, got string '1'"),
        ("sum([1, 'a'])", "sum() expects an array of numbers; item 1 is string 'a'"),
        ("slice(5, 1)", "slice() expects a string or an array, got number 5"),
        ("slice('a', 'b')", "slice() expects a whole number as the start, got string 'b'"),
    ],
)
def test_wrong_argument_types_name_the_function(source: str, message: str) -> None:
    assert failure(source).startswith(message)


def test_replace_refuses_to_build_huge_strings() -> None:
    source = "replace('a' + '" + "a" * 1000 + "', 'a', '" + "b" * 20_000 + "')"
    assert failure(source) == (
        f"replace() would build a string longer than {MAX_TEXT_LENGTH:,} characters"
    )


def test_function_arguments_are_evaluated_in_the_scope() -> None:
    assert run("upper($json.users[0].name)") == "BO"


# -- safety -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    ["$json.__class__", "$json.a.__dict__", "$json.name.__len__", "$json.items.append"],
)
def test_python_attributes_are_never_reachable(source: str) -> None:
    assert "not found" in failure(source) or "cannot read field" in failure(source)


def test_dunder_names_are_not_roots() -> None:
    from nodeloom.errors import ExpressionSyntaxError

    for source in ("__import__('os')", "eval('1')", "__builtins__"):
        with pytest.raises(ExpressionSyntaxError):
            compile_expression(source)


def test_comparing_self_referencing_data_fails_cleanly() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert failure("$json == $json", DictScope({"$json": loop})) == (
        "a value is nested too deeply to evaluate"
    )
