from typing import Any

from nodeloom.plugins.contract import DataValue, ExecutionResult, FlowContext


class MergeExecutor:
    node_type = "merge"

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        arrived = context.sources("input")
        if data.get("mode") == "object":
            merged: dict[str, Any] = {}
            for name, value in arrived:
                key, n = name, 2
                while key in merged:  # one source wired twice (e.g. Filter pass and reject)
                    key, n = f"{name} ({n})", n + 1
                merged[key] = value
            return ExecutionResult({"output": merged})
        return ExecutionResult({"output": [value for _, value in arrived]})


executor = MergeExecutor()
