from nodeloom.plugins.contract import ExecutionResult


class Const:
    node_type = "const"

    async def execute(self, data, inputs, context):
        return ExecutionResult({"output": data.get("value")})


executor = Const()
