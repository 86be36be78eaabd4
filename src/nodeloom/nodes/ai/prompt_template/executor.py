import json
from typing import Any

from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class PromptTemplateExecutor:
    """The engine has already rendered `template`; this node names the result `text`."""

    node_type = "prompt-template"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        text = data.get("template")
        if not isinstance(text, str):
            text = "" if text is None else json.dumps(text, ensure_ascii=False)
        return ExecutionResult({"output": {"text": text}})


executor = PromptTemplateExecutor()
