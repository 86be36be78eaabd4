"""Send and Wait: email approve / reject links, then wait for the one followed."""

from nodeloom.nodes.integration.send_email.definition import check_email
from nodeloom.nodes.integration.send_email.definition import definition as send_email
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

DEFAULT_TIMEOUT = 3 * 24 * 3600  # three days

definition = NodeDefinition(
    id="send-and-wait",
    name="Send and Wait",
    category="integration",
    description="Emails a message with signed approve and reject links, then waits: the "
    "link followed resumes the run on `approve` or `reject`; one followed after `timeout` "
    "goes to `timeout`.",
    icon="MailQuestion",
    inputs=(
        Port(
            "input",
            required=False,
            description="Optional: the spine value, for expressions in the parameters ($json).",
        ),
    ),
    outputs=(
        Port("approve", label="Approve", description="{decision, to}: the approve link."),
        Port("reject", label="Reject", description="{decision, to}: the reject link."),
        Port(
            "timeout",
            label="Timeout",
            description="{decision: timeout, to}: a link followed after `timeout`.",
        ),
    ),
    main_output="approve",
    parameters=(
        *(p for p in send_email.parameters if p.id != "timeout"),
        Parameter(
            "timeout",
            "number",
            "Decide within (s)",
            default=DEFAULT_TIMEOUT,
            minimum=1,
            description="Seconds the links stay valid; a link followed later sends the run "
            "to `timeout`. Default three days.",
        ),
    ),
    # Running it again is safe: the email goes out only when the node really starts to
    # wait (InputRequest.announce), never for a wait on record. A crash while sending may
    # send it twice; it never leaves the person without one.
    side_effects="idempotent",
    interactive=True,
    output_shape={"decision": "string", "to": "list"},
    check=check_email,
)
