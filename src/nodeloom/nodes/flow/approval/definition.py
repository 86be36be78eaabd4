from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import InputRequest, NodeDefinition, Parameter, Port


def asks(data: Mapping[str, Any]) -> InputRequest:
    """Always an approve/reject decision, whatever the prompt."""
    return InputRequest("approval", str(data.get("prompt") or "Approve?"))


definition = NodeDefinition(
    id="approval",
    name="Approval",
    category="flow",
    description="Pauses the run until a person approves or rejects; passes its input on to "
    "the chosen branch.",
    icon="ShieldCheck",
    inputs=(Port("input", required=False),),
    outputs=(
        Port("decision", description='{"decision": "approve"|"reject", "note"}: always fires'),
        Port("approve", description="the input, when approved"),
        Port("reject", description="the input, when rejected"),
    ),
    main_output="decision",
    parameters=(
        Parameter(
            "prompt",
            "text",
            "Question",
            default="Approve?",
            description="What the person is asked; expressions allowed",
        ),
    ),
    interactive=True,
    asks=asks,
)
