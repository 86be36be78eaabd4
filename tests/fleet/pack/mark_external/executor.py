import asyncio

from nodeloom.plugins.contract import ExecutionResult


class MarkExternal:
    """Mark, declared `external`: awaits `seconds`, then appends "<run id> <node id>"
    to the file `path`."""

    node_type = "mark-external"

    async def execute(self, data, inputs, context):
        await asyncio.sleep(data["seconds"])
        with open(data["path"], "a", encoding="utf-8") as out:
            out.write(f"{context.run_id} {context.node_id}\n")
        return ExecutionResult({"output": context.node_id})


executor = MarkExternal()
