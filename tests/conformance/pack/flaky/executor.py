from nodeloom.errors import NodeError
from nodeloom.plugins.contract import ExecutionResult


class Flaky:
    """Fails its first `failures` attempts in a run, then outputs the attempt count."""

    node_type = "flaky"

    async def execute(self, data, inputs, context):
        attempts = context.state.setdefault("attempts", {})
        attempts[context.node_id] = attempts.get(context.node_id, 0) + 1
        if attempts[context.node_id] <= data["failures"]:
            raise NodeError(f"attempt {attempts[context.node_id]} failed", code=data["code"])
        return ExecutionResult({"output": attempts[context.node_id]})


executor = Flaky()
