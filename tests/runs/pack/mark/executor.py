import asyncio

from nodeloom.plugins.contract import ExecutionResult


class Mark:
    """Sleeps `seconds`, then logs its node id (one line per finished execution) and
    outputs input + 1 (0 without input); `size` > 0 adds a string of that many bytes, a
    `note` is passed on as given."""

    node_type = "mark"

    async def execute(self, data, inputs, context):
        await asyncio.sleep(data["seconds"])
        with open(data["log"], "a", encoding="utf-8") as log:
            log.write(context.node_id + "\n")
        value = inputs["input"].value if "input" in inputs else None
        number = (value["n"] if isinstance(value, dict) else 0) + 1
        output = {"n": number}
        if data.get("note"):
            output["note"] = data["note"]
        if data["size"]:
            output["payload"] = "x" * int(data["size"])
        return ExecutionResult({"output": output})


executor = Mark()
