"""Code: run the user's `def main(input, nodes)` in a fresh, limited Python process."""

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

DEFAULT_CODE = "def main(input, nodes):\n    return input\n"

definition = NodeDefinition(
    id="code",
    name="Code",
    category="flow",
    description="Runs your Python function `main(input, nodes)` in a separate process and "
    "outputs what it returns (any JSON value). `input` is this node's input; `nodes` maps "
    "each upstream node's name to its output. What the code prints is shown as logs.",
    icon="Code",
    execution_mode="flow",
    inputs=(
        Port(
            "input",
            required=False,
            description="Passed to main as `input`; None when nothing is wired.",
        ),
    ),
    outputs=(Port("output", description="The JSON value main returned."),),
    parameters=(
        Parameter(
            "code",
            "code",
            "Code",
            default=DEFAULT_CODE,
            required=True,
            language="python",
            description="Python source defining `def main(input, nodes)`; its return value "
            "must be JSON-serialisable.",
        ),
        Parameter(
            "timeout",
            "number",
            "Timeout (s)",
            default=30,
            minimum=0.1,
            maximum=3600,
            description="Wall-clock seconds before the code's process is killed.",
        ),
        Parameter(
            "memory_limit_mb",
            "integer",
            "Memory limit (MB)",
            default=512,
            minimum=32,
            description="Address-space limit of the code's process, the Python interpreter "
            "included (about 15 MB).",
        ),
    ),
    side_effects="external",
)
