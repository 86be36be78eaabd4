"""The graph: what a flow file holds, and every problem in it, located, before a run.

    model        Graph, Node, Edge (a parsed document)
    document     read_document, parse_graph: JSON/YAML text, a path or a dict -> Graph
    definitions  the protocols validation reads node types through (the plugins'
                 NodeDefinition and Registry satisfy them), Port, ERROR_PORT, SETTINGS
    sockets      socket types and which connect; coercion: converting values between them
    parameters   a node's parameters and settings: static checks, retry, templates
    structure    the structural part (agent clusters wired through `tools`)
    validation   validate, check_graph -> CheckedGraph (with checked, node_checks,
                 edge_checks, ordering and references)

`graph` imports nothing of `nodeloom.plugins` or the engine; they build on it.
"""
