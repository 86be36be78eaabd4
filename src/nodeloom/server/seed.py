"""`nodeloom serve --flows PATH`: save graph files as flows when the server starts.

A file becomes the flow named by its graph's `name` (else its file name). A flow of that
name that exists already gets a new version only if the document changed, so restarting
the server adds nothing. Files that do not load are reported and skipped.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from nodeloom.errors import GraphError
from nodeloom.formats import read_graph
from nodeloom.graph.validation import validate
from nodeloom.plugins.registry import Registry
from nodeloom.store import Store
from nodeloom.tools import allow_list as python_tools

GRAPH_SUFFIXES = (".json", ".yaml", ".yml")
_NOT_GRAPHS = (".mock.yaml", ".mock.yml", ".flowtest.yaml", ".cassette.json")


def graph_files(paths: Iterable[Path]) -> list[Path]:
    """The files named, and the graph files directly inside the folders named (mock LLM
    scripts, `*.mock.yaml`, and flow tests, `*.flowtest.yaml`, are not graphs)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(
                p
                for p in path.iterdir()
                if p.is_file() and p.suffix in GRAPH_SUFFIXES and not p.name.endswith(_NOT_GRAPHS)
            )
        else:
            found.append(path)
    return found


async def import_flows(store: Store, registry: Registry, paths: Iterable[Path]) -> list[str]:
    """Save each graph file as a flow (see the module doc); the names of the flows saved."""
    existing = {flow.name: flow.id for flow in await store.list_flows()}
    saved: list[str] = []
    for path in graph_files(paths):
        try:
            document, _ = read_graph(path)
            validate(document, registry).raise_for_issues()
            python_tools.check(document)
        except (GraphError, OSError) as exc:
            print(f"nodeloom serve: skipped {path}: {exc}", file=sys.stderr)
            continue
        name = str(document.get("name") or path.stem)
        flow_id = existing.get(name)
        if flow_id is not None and (await store.get_flow(flow_id)).document == document:
            continue
        version = await store.save_flow(name, document, flow_id)
        existing[name] = version.flow_id
        saved.append(f"{name} (version {version.version})")
    return saved
