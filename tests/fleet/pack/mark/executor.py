import asyncio

from nodeloom.plugins.contract import ExecutionResult


class Mark:
    """Awaits `seconds`, then appends "<run id> <node id>" to the file `path` (a side
    effect the fleet tests count: one line per execution that ran to its end)."""

    node_type = "mark"

    async def execute(self, data, inputs, context):
        await asyncio.sleep(data["seconds"])
        with open(data["path"], "a", encoding="utf-8") as out:
            out.write(f"{context.run_id} {context.node_id}\n")
        return ExecutionResult({"output": context.node_id})


executor = Mark()
