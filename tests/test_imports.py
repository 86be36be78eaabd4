"""The import graph of `src/nodeloom`: no module imports another that (directly or through
others) imports it back, and packages import only packages of lower layers.

Every import counts, wherever it is written: at the top, inside a function, or under
`TYPE_CHECKING`. The layers are the architecture of docs/architecture.md; a new package
takes its place in LAYERS.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import nodeloom

ROOT = Path(nodeloom.__file__).parent

# Bottom to top: a package may import packages of lower layers only (and itself).
LAYERS: list[set[str]] = [
    {"errors", "values", "regex", "cassettes"},  # leaves: no nodeloom import but errors
    {"expressions", "net", "secrets"},
    {"graph"},  # the graph model and its validation
    {"plugins"},  # the node contract, discovery, the registry
    {"conditions", "files", "tools", "user_tools", "observability"},  # helpers of nodes
    {"models", "knowledge"},  # knowledge: documents, embeddings, the knowledge stores
    {"nodes", "formats", "paths"},  # the catalogue; foreign formats; where data lives
    {"engine", "store", "flow_steps"},
    {"runs", "testing"},
    {"evaluation", "nodeloom", "fleet"},  # `nodeloom`: the public API; fleet: queue, jobs, workers
    {"publishing"},  # saved flows as MCP tools (for the server and the CLI)
    {"server", "cli"},
    {"__main__"},
]
# Cycles being removed (none left: keep it that way).
PENDING_CYCLES: list[set[str]] = []


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports() -> dict[str, set[str]]:
    """Module -> the nodeloom modules it imports (a package's __init__ for a name that is
    not a submodule)."""
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
                targets = [t for t in targets[:-1] if t in known] or [base]
            else:
                continue
            graph[name].update(t for t in targets if t in known and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(group)

    for v in graph:
        if v not in index:
            visit(v)
    return found


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "nodeloom"


def test_no_module_imports_itself_through_others():
    found = [group for group in cycles(imports()) if group not in PENDING_CYCLES]
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(sorted(g)) for g in found)


def test_packages_import_only_packages_of_lower_layers():
    layer = {package: n for n, packages in enumerate(LAYERS) for package in packages}
    wrong: dict[str, set[str]] = defaultdict(set)
    for module, targets in imports().items():
        source = package_of(module)
        assert source in layer, f"{source} (of {module}) is in no layer: add it to LAYERS"
        for target in targets:
            imported = package_of(target)
            if imported != source and layer[imported] >= layer[source]:
                wrong[f"{source} -> {imported}"].add(f"{module} imports {target}")
    assert not wrong, {edge: sorted(places)[:3] for edge, places in wrong.items()}


def test_the_graph_package_does_not_import_the_plugin_package():
    offenders = [
        f"{module} imports {target}"
        for module, targets in imports().items()
        if package_of(module) == "graph"
        for target in targets
        if package_of(target) == "plugins"
    ]
    assert offenders == []


def test_the_check_finds_a_cycle_and_a_layer_violation():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert package_of("nodeloom.graph.model") == "graph" and package_of("nodeloom") == "nodeloom"
