from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import InputRequest, NodeDefinition, Parameter, Port
from nodeloom.plugins.deadlines import check_timeout, timeout_parameters, timeout_port

FIELD_TYPES = ("string", "number", "boolean")


def _check(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    return check_timeout(data) + _check_fields(data)


def _check_fields(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    fields = data.get("fields")
    if fields is None or isinstance(fields, str):
        return []
    if not isinstance(fields, list):
        return [("fields", 'fields is a list of {"name", "label"?, "type"?, "required"?}')]
    problems, seen = [], set()
    for index, field in enumerate(fields):
        where = f"fields[{index}]"
        name = field.get("name") if isinstance(field, dict) else None
        if not isinstance(name, str) or not name:
            problems.append((where, "a field needs a `name`"))
        elif name in seen:
            problems.append((where, f"the field '{name}' is listed twice"))
        elif field.get("type", "string") not in FIELD_TYPES:
            problems.append((f"{where}.type", f"a field's type is one of {', '.join(FIELD_TYPES)}"))
        seen.add(name)
    return problems


def asks(data: Mapping[str, Any]) -> InputRequest | None:
    """Text, or the form of `fields`; None when the fields are set by an expression."""
    if "fields" not in data:
        return None
    fields = data.get("fields") or ()
    if not isinstance(fields, (list, tuple)) or not all(isinstance(f, Mapping) for f in fields):
        return None  # the graph's validation reports it
    return InputRequest("input", str(data.get("prompt") or ""), fields=tuple(fields))


definition = NodeDefinition(
    id="human-input",
    name="Human Input",
    category="flow",
    description="Pauses the run until a person answers: free text, or the fields of a form. "
    "With `timeout`, nobody answering in time fails the node, answers `timeout_answer`, or "
    "goes out on `timeout`.",
    icon="UserPen",
    inputs=(Port("input", required=False),),
    outputs=(
        Port("output", description='{"text": ...} or the form as {field: value}'),
        timeout_port("The input, when nobody answered within `timeout`."),
    ),
    parameters=(
        Parameter("prompt", "text", "Question", default="Your input?"),
        Parameter(
            "fields",
            "json",
            "Form fields",
            description='[{"name", "label"?, '
            '"type"?: string|number|boolean, "required"?: true}]; none: free text',
        ),
        *timeout_parameters(
            Parameter(
                "timeout_answer",
                "json",
                "Answer on timeout",
                default="",
                description="on_timeout answer: the answer taken when nobody answered "
                "(text, or the form's object).",
            )
        ),
    ),
    interactive=True,
    asks=asks,
    check=_check,
)
