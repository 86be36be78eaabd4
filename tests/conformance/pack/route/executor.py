from nodeloom.plugins.contract import ExecutionResult


class Route:
    """Passes its input to port a, b, both or none."""

    node_type = "route"

    async def execute(self, data, inputs, context):
        value = inputs["input"].value if "input" in inputs else None
        ports = {"a": ["a"], "b": ["b"], "both": ["a", "b"], "none": []}[data["port"]]
        return ExecutionResult({port: value for port in ports})


executor = Route()
