from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import InputRequest, NodeDefinition, Parameter, Port
from nodeloom.plugins.deadlines import check_timeout, timeout_parameters, timeout_port


def asks(data: Mapping[str, Any]) -> InputRequest:
    """Always an approve/reject decision, whatever the prompt."""
    return InputRequest("approval", str(data.get("prompt") or "Approve?"))


definition = NodeDefinition(
    id="approval",
    name="Approval",
    category="flow",
    description="Pauses the run until a person approves or rejects; passes its input on to "
    "the chosen branch. With `timeout`, nobody answering in time fails the node, answers "
    "`timeout_answer`, or goes out on `timeout`.",
    icon="ShieldCheck",
    inputs=(Port("input", required=False),),
    outputs=(
        Port(
            "decision",
            description='{"decision": "approve"|"reject", "note"}: fires with every answer',
        ),
        Port("approve", description="the input, when approved"),
        Port("reject", description="the input, when rejected"),
        timeout_port("The input, when nobody answered within `timeout`."),
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
        *timeout_parameters(
            Parameter(
                "timeout_answer",
                "enum",
                "Answer on timeout",
                default="reject",
                options=("approve", "reject"),
                description="on_timeout answer: the decision taken when nobody answered.",
            )
        ),
    ),
    interactive=True,
    asks=asks,
    check=check_timeout,
)
