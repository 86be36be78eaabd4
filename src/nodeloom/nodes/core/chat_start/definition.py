from nodeloom.plugins.contract import NodeDefinition, Port

definition = NodeDefinition(
    id="chat-start",
    name="Chat Start",
    category="core",
    description='Where a turn enters the graph: outputs the user\'s message as {"message": ...}.',
    icon="MessageSquare",
    execution_mode="flow",
    inputs=(),
    outputs=(Port("output", description='{"message": <the turn\'s message>}'),),
    trigger=True,
    output_shape={"message": "string"},
)
