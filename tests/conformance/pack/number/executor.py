from nodeloom.plugins.contract import ExecutionResult


class Number:
    """A typed side-socket source (like a Model Selector): no spine input at all."""

    node_type = "number"

    async def execute(self, data, inputs, context):
        return ExecutionResult({"value": data["value"]})


executor = Number()
