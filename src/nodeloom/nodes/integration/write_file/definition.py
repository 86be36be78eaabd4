"""Write File: text, JSON or a file reference's content to a file under the files root."""

from nodeloom.nodes.integration.read_file.definition import check_path
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

WRITE_MODES = ("create", "overwrite", "append")

definition = NodeDefinition(
    id="write-file",
    name="Write File",
    category="integration",
    description="Writes text, JSON, or the content of a file reference to a file under the "
    "files root (NODELOOM_FILES_ROOT): create a new file, overwrite, or append.",
    icon="FileOutput",
    inputs=(
        Port(
            "input",
            required=False,
            description="What to write when `content` is empty; also $json for expressions.",
        ),
    ),
    outputs=(Port("output", description="{path, size}: the file written and its size."),),
    parameters=(
        Parameter(
            "path",
            "string",
            "Path",
            required=True,
            hybrid=True,
            socket="string",
            placeholder="exports/{{ $json.id }}.json",
            description="Relative to the files root; missing folders are made. `..`, "
            "absolute paths and symbolic links are refused.",
        ),
        Parameter(
            "content",
            "json",
            "Content",
            default=None,
            hybrid=True,
            socket="json",
            description="A string is written as UTF-8 text; a file reference "
            '({"$ref": "file:..."}) as its bytes, streamed; any other JSON as JSON. '
            "Empty: the spine input.",
        ),
        Parameter(
            "mode",
            "enum",
            "Mode",
            default="create",
            options=WRITE_MODES,
            description="create: fail if the file exists; overwrite: replace it "
            "atomically; append: add to its end (JSON as one JSON Lines record).",
        ),
    ),
    side_effects="external",
    output_shape={"path": "string", "size": "int"},
    check=check_path,
)
