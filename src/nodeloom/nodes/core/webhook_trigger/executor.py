from typing import Any

from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext

DEFAULT_SECRET_HEADER = "X-Nodeloom-Secret"


class WebhookTriggerExecutor:
    node_type = "webhook-trigger"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        trigger = context.trigger if isinstance(context.trigger, dict) else {}
        secret_header = str(data.get("secret_header") or DEFAULT_SECRET_HEADER).lower()
        headers = trigger.get("headers")
        query = trigger.get("query")
        return ExecutionResult(
            {
                "output": {
                    "body": trigger.get("body"),
                    "headers": {
                        str(k): v
                        for k, v in (headers if isinstance(headers, dict) else {}).items()
                        if str(k).lower() != secret_header
                    },
                    "query": dict(query) if isinstance(query, dict) else {},
                }
            }
        )


executor = WebhookTriggerExecutor()
