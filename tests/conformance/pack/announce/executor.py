from nodeloom.plugins.contract import ExecutionResult, InputRequest


class Announce:
    """Waits for text; its `announce` appends the node id to state["announced"]."""

    node_type = "announce"

    async def execute(self, data, inputs, context):
        async def announce():
            context.state.setdefault("announced", []).append(context.node_id)

        answer = await context.wait_for_input(InputRequest("input", "Say?", announce=announce))
        return ExecutionResult({"output": answer})


executor = Announce()
