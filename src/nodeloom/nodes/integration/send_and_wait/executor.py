"""Send and Wait: the email is sent when the node really starts to wait
(`InputRequest.announce`), so a resumed run never sends it twice; its links are signed
(`nodeloom.secrets.links`) and bound to this wait, which makes them single-use: the server
(`/api/decisions/{token}`) accepts a link only while this very wait is open.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import time
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.nodes.integration.send_and_wait.definition import DEFAULT_TIMEOUT
from nodeloom.nodes.integration.send_email.message import Outgoing, compose
from nodeloom.nodes.integration.send_email.smtp import deliver
from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext, InputRequest
from nodeloom.secrets.links import sign_decision

ENV_PUBLIC_URL = "NODELOOM_PUBLIC_URL"
SMTP_TIMEOUT = 60.0
ANSWERS = ("approve", "reject", "timeout")


class SendAndWaitExecutor:
    node_type = "send-and-wait"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        outgoing = await compose(data, context.services.blobs)
        base = public_url()
        timeout = data.get("timeout") or DEFAULT_TIMEOUT
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise NodeError(
                f"Send and Wait `timeout` is a number of seconds > 0; got {timeout!r}.",
                code="invalid_parameter",
                retryable=False,
                details={"field": "timeout"},
            )
        incoming = inputs["input"].value if "input" in inputs else None
        wait = wait_id(context.run_id, context.node_id, incoming, outgoing)

        async def announce() -> None:
            links = {
                decision: f"{base}/api/decisions/"
                + sign_decision(
                    context.services.data_dir,
                    run_id=context.run_id,
                    node_id=context.node_id,
                    wait=wait,
                    decision=decision,
                    expires=time.time() + timeout,
                )
                for decision in ("approve", "reject")
            }
            message = outgoing.message(
                text_after=f"\n\nApprove: {links['approve']}\nReject: {links['reject']}\n",
                html_after=_buttons(links),
            )
            await deliver(
                outgoing.account,
                message,
                outgoing.envelope_sender,
                outgoing.recipients,
                SMTP_TIMEOUT,
            )

        request = InputRequest(
            "input",
            prompt=f"Approve or reject (emailed to {', '.join(outgoing.to)}): {outgoing.subject}",
            value={"wait": wait, "to": outgoing.to, "subject": outgoing.subject},
            announce=announce,
            wake_at=time.time() + timeout,
        )
        # The deadline holds while the run is paused too: the server's timer service
        # wakes the run then, and the wait ends on the `timeout` port.
        try:
            answer = await context.wait_for_input(request)
        except TimeoutError:
            answer = "timeout"
        decision = answer.strip().lower() if isinstance(answer, str) else answer
        if decision not in ANSWERS:
            raise NodeError(
                f"Send and Wait takes approve, reject or timeout as its answer; got {answer!r}.",
                code="invalid_answer",
                retryable=False,
            )
        return ExecutionResult({decision: {"decision": decision, "to": outgoing.to}})


def public_url() -> str:
    base = os.environ.get(ENV_PUBLIC_URL, "").strip().rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise NodeError(
            f"Send and Wait's links point at the server, and {ENV_PUBLIC_URL} is not set (or "
            f"is not an http(s) URL). Set it to the address the recipients reach the server "
            f"at, e.g. {ENV_PUBLIC_URL}=https://flows.example.com.",
            code="public_url",
            retryable=False,
        )
    return base


def wait_id(run_id: str, node_id: str, incoming: Any, outgoing: Outgoing) -> str:
    """The same for a re-execution of this wait (a resumed run), different for another
    input (another Loop item). Holds no secret: it appears in the links."""
    seed = json.dumps(
        [run_id, node_id, incoming, outgoing.to, outgoing.subject],
        sort_keys=True,
        default=str,
        ensure_ascii=False,
    )
    return hashlib.sha256(seed.encode()).hexdigest()[:24]


def _buttons(links: dict[str, str]) -> str:
    approve, reject = (html.escape(links[d], quote=True) for d in ("approve", "reject"))
    return f'<p><a href="{approve}">Approve</a> &nbsp; <a href="{reject}">Reject</a></p>'


executor = SendAndWaitExecutor()
