from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="prompt-template",
    name="Prompt Template",
    category="ai",
    description='Fills a text template with expressions; outputs {"text": ...}.',
    icon="FileText",
    inputs=(Port("input", required=False),),
    outputs=(Port("output", description='{"text": <the rendered template>}'),),
    parameters=(
        Parameter(
            "template",
            "text",
            "Template",
            required=True,
            placeholder="Answer this: {{ $json.message }}",
            description="Text with {{ }} expressions, e.g. {{ $('Chat Start').item.json.message }}",
        ),
    ),
    output_shape={"text": "string"},
)
