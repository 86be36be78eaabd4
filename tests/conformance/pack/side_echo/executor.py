from nodeloom.plugins.contract import ExecutionResult


class SideEcho:
    """Outputs its input with the resolved hybrid parameters."""

    node_type = "side-echo"

    async def execute(self, data, inputs, context):
        return ExecutionResult(
            {
                "output": {
                    "input": inputs["input"].value,
                    "temperature": data["temperature"],
                    "label": data["label"],
                }
            }
        )


executor = SideEcho()
