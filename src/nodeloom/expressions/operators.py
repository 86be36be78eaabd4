"""What the operators do: arithmetic, comparison, equality and `in`.

Types are never converted silently: `"1" + 2` and `"a" < 3` are errors that say how to
convert. `==` is strict (true != 1, "1" != 1); 1 == 1.0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from nodeloom.errors import ExpressionEvalError
from nodeloom.expressions.values import a_kind, is_number, preview, type_name


def _operands(a: Any, op: str, b: Any) -> str:
    return f"({preview(a)} {op} {preview(b)})"


def _overflow(a: Any, op: str, b: Any) -> ExpressionEvalError:
    return ExpressionEvalError(f"number too large {_operands(a, op, b)}")


def add(a: Any, b: Any) -> Any:
    if is_number(a) and is_number(b):
        try:
            return a + b
        except OverflowError:
            raise _overflow(a, "+", b) from None
    if isinstance(a, str) and isinstance(b, str):
        return a + b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return [*a, *b]
    hint = ""
    if isinstance(a, str) or isinstance(b, str):
        hint = "; to join text convert the other side with string(x), to add numbers use number(x)"
    raise ExpressionEvalError(
        f"cannot add {a_kind(a)} and {a_kind(b)} {_operands(a, '+', b)}{hint}"
    )


def _arithmetic(op: str, compute: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def apply(a: Any, b: Any) -> Any:
        if not (is_number(a) and is_number(b)):
            raise ExpressionEvalError(
                f"'{op}' needs two numbers, got {type_name(a)} and {type_name(b)} "
                f"{_operands(a, op, b)}; convert text with number(x)"
            )
        try:
            return compute(a, b)
        except ZeroDivisionError:
            raise ExpressionEvalError(f"division by zero {_operands(a, op, b)}") from None
        except OverflowError:
            raise _overflow(a, op, b) from None

    return apply


def _divide(a: int | float, b: int | float) -> int | float:
    if isinstance(a, int) and isinstance(b, int) and b != 0 and a % b == 0:
        return a // b
    return a / b


subtract = _arithmetic("-", lambda a, b: a - b)
multiply = _arithmetic("*", lambda a, b: a * b)
divide = _arithmetic("/", _divide)
modulo = _arithmetic("%", lambda a, b: a % b)


def negate(value: Any) -> Any:
    if not is_number(value):
        raise ExpressionEvalError(f"'-' needs a number, got {type_name(value)} {preview(value)}")
    return -value


def equal(a: Any, b: Any) -> bool:
    """Strict equality: no conversions; a boolean never equals a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) and is_number(b):
        return bool(a == b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(equal(a[key], b[key]) for key in a)
    if type_name(a) != type_name(b):
        return False
    return bool(a == b)


def not_equal(a: Any, b: Any) -> bool:
    return not equal(a, b)


def _comparison(op: str, compute: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def apply(a: Any, b: Any) -> bool:
        if (is_number(a) and is_number(b)) or (isinstance(a, str) and isinstance(b, str)):
            return compute(a, b)
        raise ExpressionEvalError(
            f"cannot compare {a_kind(a)} with {a_kind(b)} using '{op}' {_operands(a, op, b)}; "
            "both sides must be numbers or both strings (convert with number(x) or string(x))"
        )

    return apply


less = _comparison("<", lambda a, b: a < b)
less_equal = _comparison("<=", lambda a, b: a <= b)
greater = _comparison(">", lambda a, b: a > b)
greater_equal = _comparison(">=", lambda a, b: a >= b)


def contains(container: Any, item: Any, *, what: str = "'in'") -> bool:
    """`item in container`: substring of a string, element of an array, key of an object."""
    if isinstance(container, str):
        if not isinstance(item, str):
            raise ExpressionEvalError(
                f"{what} with a string to search needs a string to find, got {type_name(item)} "
                f"{preview(item)}; convert it with string(x)"
            )
        return item in container
    if isinstance(container, (list, tuple)):
        return any(equal(element, item) for element in container)
    if isinstance(container, Mapping):
        return isinstance(item, str) and item in container
    raise ExpressionEvalError(
        f"{what} needs a string, array or object to search in, got {type_name(container)} "
        f"{preview(container)}"
    )


def _in(item: Any, container: Any) -> bool:
    return contains(container, item)


def _not_in(item: Any, container: Any) -> bool:
    return not contains(container, item, what="'not in'")


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": add,
    "-": subtract,
    "*": multiply,
    "/": divide,
    "%": modulo,
    "==": equal,
    "!=": not_equal,
    "<": less,
    "<=": less_equal,
    ">": greater,
    ">=": greater_equal,
    "in": _in,
    "not in": _not_in,
}
"""Binary operator -> function of the two operand values."""
