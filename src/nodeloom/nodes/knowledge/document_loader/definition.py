"""Document Loader: files, folders, globs, uploads and URLs -> a list of documents."""

from nodeloom.plugins import NodeDefinition, Parameter, Port

definition = NodeDefinition(
    id="document-loader",
    name="Document Loader",
    category="knowledge",
    description="Reads txt, md, html, pdf, docx, csv and json files (a path, a glob, a "
    "folder, uploaded files) and URLs into documents {id, text, metadata}. A file it cannot "
    "read is reported on `errors`; the others still load.",
    icon="FileText",
    inputs=(
        Port(
            "input",
            required=False,
            description="Optional: more sources (a path, a URL, a list of them, uploaded "
            "files {$ref, mime, name}, or an object with `files`/`paths`).",
        ),
    ),
    outputs=(
        Port("output", label="Documents", description="[{id, text, metadata}]"),
        Port("errors", label="Errors", description="[{source, code, message}] per failed file."),
    ),
    main_output="output",
    parameters=(
        Parameter(
            "sources",
            "json",
            "Sources",
            default=[],
            description="Paths, globs (docs/**/*.md), folders and http(s) URLs.",
            placeholder='["docs/", "https://example.com/faq.html"]',
        ),
        Parameter(
            "strict",
            "boolean",
            "Fail on an unreadable file",
            default=False,
            description="Off: unreadable files are reported and skipped (the node fails only "
            "when nothing loads). On: the first unreadable file fails the node, and the "
            "node's On error setting decides what happens.",
        ),
        Parameter(
            "allow_private_network",
            "boolean",
            "Allow private network",
            default=False,
            description="Let URLs reach loopback and private addresses (refused otherwise).",
        ),
    ),
    side_effects="pure",
    output_shape={"type": "array", "items": {"id": "string", "text": "string", "metadata": {}}},
)
