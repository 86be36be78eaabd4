"""Send Email: compose the message (`message`), then hand it to the account's server
(`smtp`). The account's password never appears in a message or an event.
"""

from __future__ import annotations

from typing import Any

from nodeloom.nodes.integration.send_email.message import compose
from nodeloom.nodes.integration.send_email.smtp import deliver
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext

DEFAULT_TIMEOUT = 60.0


class SendEmailExecutor:
    node_type = "send-email"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        outgoing = await compose(data, context.services.blobs)
        message = outgoing.message()
        timeout = float(data.get("timeout") or DEFAULT_TIMEOUT)
        await deliver(
            outgoing.account, message, outgoing.envelope_sender, outgoing.recipients, timeout
        )
        output = {"message_id": message["Message-ID"], "recipients": outgoing.recipients}
        return ExecutionResult({"output": output})


executor = SendEmailExecutor()
