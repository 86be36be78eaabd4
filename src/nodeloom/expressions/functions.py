"""The whitelisted functions an expression may call, e.g. `lower($json.name)`.

Each is a plain Python function over expression values, registered with its usage line.
The parser checks names and argument counts when a template is compiled; the functions
check argument types when they run, and name themselves in every error.
`default(value, fallback)` is listed here but compiled as `value ?? fallback`.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from typing import Any

from nodeloom.errors import ExpressionEvalError
from nodeloom.expressions import operators
from nodeloom.expressions.values import describe, is_number, to_json, to_text, type_name

MAX_TEXT_LENGTH = 10_000_000
"""The longest string `replace()` may build, so one expression cannot exhaust memory."""


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    usage: str  # e.g. "join(list, separator='')"
    call: Callable[..., Any]
    min_args: int
    max_args: int | None  # None: any number


FUNCTIONS: dict[str, Function] = {}


def _register(usage: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def add(call: Callable[..., Any]) -> Callable[..., Any]:
        name = usage.split("(", 1)[0]
        params = inspect.signature(call).parameters.values()
        variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
        required = sum(1 for p in params if p.default is p.empty and p.kind is not p.VAR_POSITIONAL)
        maximum = None if variadic else len(params)
        FUNCTIONS[name] = Function(name, usage, call, max(required, 1 if variadic else 0), maximum)
        return call

    return add


def _expects(function: str, what: str, value: Any, argument: str = "") -> ExpressionEvalError:
    where = f" as {argument}" if argument else ""
    return ExpressionEvalError(f"{function}() expects {what}{where}, got {describe(value)}")


def _text(function: str, value: Any, argument: str = "") -> str:
    if not isinstance(value, str):
        raise _expects(function, "a string", value, argument)
    return value


def _list(function: str, value: Any, argument: str = "") -> list[Any] | tuple[Any, ...]:
    if not isinstance(value, (list, tuple)):
        raise _expects(function, "an array", value, argument)
    return value


def _integer(function: str, value: Any, argument: str) -> int:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise _expects(function, "a whole number", value, argument)
    return value


@_register("len(value)")
def _len(value: Any) -> int:
    if isinstance(value, (str, list, tuple, Mapping)):
        return len(value)
    raise _expects("len", "a string, array or object", value)


@_register("lower(text)")
def _lower(text: Any) -> str:
    return _text("lower", text).lower()


@_register("upper(text)")
def _upper(text: Any) -> str:
    return _text("upper", text).upper()


@_register("trim(text)")
def _trim(text: Any) -> str:
    return _text("trim", text).strip()


@_register("string(value)")
def _string(value: Any) -> str:
    return to_text(value)


_NUMBER_TEXT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER_TEXT = re.compile(r"[+-]?\d+")


def _parse_number(function: str, text: str) -> int | float:
    stripped = text.strip()
    try:
        if _INTEGER_TEXT.fullmatch(stripped):
            return int(stripped)
        if _NUMBER_TEXT.fullmatch(stripped):
            return float(stripped)
    except ValueError:  # more digits than Python converts
        pass
    raise ExpressionEvalError(f"{function}() cannot read {text[:40]!r} as a number")


@_register("number(value)")
def _number(value: Any) -> int | float:
    if isinstance(value, bool):
        return int(value)
    if is_number(value):
        return value  # type: ignore[no-any-return]
    if isinstance(value, str):
        return _parse_number("number", value)
    raise _expects("number", "a string, number or boolean", value)


@_register("int(value)")
def _int(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        number = _parse_number("int", value)
    elif is_number(value):
        number = value
    else:
        raise _expects("int", "a string, number or boolean", value)
    try:
        return int(number)
    except (OverflowError, ValueError):  # inf, nan
        raise ExpressionEvalError(f"int() cannot convert {number} to a whole number") from None


_TRUE_TEXT = frozenset({"true", "yes", "on", "1"})
_FALSE_TEXT = frozenset({"false", "no", "off", "0", ""})


@_register("bool(value)")
def _bool(value: Any) -> bool:
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_TEXT:
            return True
        if word in _FALSE_TEXT:
            return False
        raise ExpressionEvalError(
            f"bool() cannot read {value[:40]!r} as a boolean; "
            "expected true/false, yes/no, on/off or 1/0"
        )
    return bool(value)


@_register("json(value)")
def _json(value: Any) -> str:
    return to_json(value)


@_register("parse_json(text)")
def _parse_json(text: Any) -> Any:
    try:
        return json.loads(_text("parse_json", text))
    except json.JSONDecodeError as exc:
        raise ExpressionEvalError(
            f"parse_json() could not parse the text: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}"
        ) from None
    except RecursionError:
        raise ExpressionEvalError("parse_json(): the JSON is nested too deeply") from None


@_register("keys(object)")
def _keys(obj: Any) -> list[Any]:
    if not isinstance(obj, Mapping):
        raise _expects("keys", "an object", obj)
    return list(obj.keys())


@_register("values(object)")
def _values(obj: Any) -> list[Any]:
    if not isinstance(obj, Mapping):
        raise _expects("values", "an object", obj)
    return list(obj.values())


@_register("join(list, separator='')")
def _join(items: Any, separator: Any = "") -> str:
    sep = _text("join", separator, "the separator")
    return sep.join(to_text(item) for item in _list("join", items))


@_register("split(text, separator)")
def _split(text: Any, separator: Any) -> list[str]:
    value = _text("split", text)
    sep = _text("split", separator, "the separator")
    return list(value) if sep == "" else value.split(sep)


@_register("replace(text, old, new)")
def _replace(text: Any, old: Any, new: Any) -> str:
    value = _text("replace", text)
    find = _text("replace", old, "the text to find")
    put = _text("replace", new, "the replacement")
    count = value.count(find) if find else len(value) + 1
    if len(value) + count * (len(put) - len(find)) > MAX_TEXT_LENGTH:
        raise ExpressionEvalError(
            f"replace() would build a string longer than {MAX_TEXT_LENGTH:,} characters"
        )
    return value.replace(find, put)


@_register("contains(container, item)")
def _contains(container: Any, item: Any) -> bool:
    return operators.contains(container, item, what="contains()")


@_register("starts_with(text, prefix)")
def _starts_with(text: Any, prefix: Any) -> bool:
    return _text("starts_with", text).startswith(_text("starts_with", prefix, "the prefix"))


@_register("ends_with(text, suffix)")
def _ends_with(text: Any, suffix: Any) -> bool:
    return _text("ends_with", text).endswith(_text("ends_with", suffix, "the suffix"))


@_register("round(number, digits=0)")
def _round(number: Any, digits: Any = 0) -> int | float:
    if not is_number(number):
        raise _expects("round", "a number", number)
    places = _integer("round", digits, "the number of digits")
    if isinstance(number, int) and places >= 0:
        return number
    if isinstance(number, float) and places > 15:
        return number
    try:
        with localcontext() as context:
            context.prec = 400
            quantum = Decimal(1).scaleb(-places)
            rounded = Decimal(repr(number)).quantize(quantum, rounding=ROUND_HALF_UP)
    except InvalidOperation:  # inf, nan, absurd digit counts
        raise ExpressionEvalError(f"round() cannot round {number} to {places} digits") from None
    return float(rounded) if places > 0 else int(rounded)


def _extreme(function: str, values: tuple[Any, ...], pick: Callable[..., Any]) -> Any:
    items = values[0] if len(values) == 1 and isinstance(values[0], (list, tuple)) else values
    if not items:
        raise ExpressionEvalError(f"{function}() of an empty array has no value")
    if all(is_number(item) for item in items) or all(isinstance(item, str) for item in items):
        return pick(items)
    kinds = sorted({type_name(item) for item in items})
    raise ExpressionEvalError(
        f"{function}() needs all numbers or all strings, got {' and '.join(kinds)}"
    )


@_register("min(values...)")
def _min(*values: Any) -> Any:
    return _extreme("min", values, min)


@_register("max(values...)")
def _max(*values: Any) -> Any:
    return _extreme("max", values, max)


@_register("abs(number)")
def _abs(number: Any) -> int | float:
    if not is_number(number):
        raise _expects("abs", "a number", number)
    return abs(number)  # type: ignore[no-any-return]


@_register("sum(list)")
def _sum(items: Any) -> int | float:
    total: int | float = 0
    for position, item in enumerate(_list("sum", items)):
        if not is_number(item):
            raise ExpressionEvalError(
                f"sum() expects an array of numbers; item {position} is {describe(item)}"
            )
        total = operators.add(total, item)
    return total


@_register("slice(value, start, end=null)")
def _slice(value: Any, start: Any, end: Any = None) -> Any:
    if not isinstance(value, (str, list, tuple)):
        raise _expects("slice", "a string or an array", value)
    first = _integer("slice", start, "the start")
    last = None if end is None else _integer("slice", end, "the end")
    return value[first:last] if isinstance(value, str) else list(value[first:last])


@_register("default(value, fallback)")
def _default(value: Any, fallback: Any) -> Any:
    return fallback if value is None else value


@_register("now()")
def _now() -> str:
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


@_register("type(value)")
def _type(value: Any) -> str:
    return type_name(value)
