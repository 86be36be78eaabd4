class Fail:
    node_type = "fail"

    async def execute(self, data, inputs, context):
        raise ValueError(data["message"])


executor = Fail()
