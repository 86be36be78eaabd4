"""Type Converter: convert the input, or one field of it, to another JSON type."""

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

TARGETS = ("string", "number", "integer", "boolean", "json", "text")

definition = NodeDefinition(
    id="type-converter",
    name="Type Converter",
    category="data",
    description="Converts the input (or the field at a dotted path, in a copy of the "
    "input) to string, number, integer, boolean, parsed JSON or pretty JSON text.",
    icon="ArrowLeftRight",
    inputs=(Port("input", description="The value to convert."),),
    outputs=(
        Port("output", description="The converted value (or the input with the field converted)."),
    ),
    parameters=(
        Parameter(
            "to",
            "enum",
            "Convert to",
            required=True,
            options=TARGETS,
            description="string, number, integer, boolean, json (parse a JSON string) or "
            "text (pretty JSON text).",
        ),
        Parameter(
            "field",
            "string",
            "Field",
            description="Dotted path (user.age, items.0.price) of the field to convert; "
            "empty converts the whole input.",
            placeholder="user.age",
        ),
    ),
    side_effects="pure",
)
