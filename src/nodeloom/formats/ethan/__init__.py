"""Agent Ethan YAML graphs (seed 001), loaded into native graphs of `ethan-*` nodes.

    meta, state, prompts, tools, graph, subgraphs  ->  one native graph whose nodes all
                                                       have `activation: each`

`loader` is light: detecting a document imports nothing heavy; converting one imports
the schema (pydantic), the Jinja sandbox and JsonLogic. See docs/formats/ethan.md.
The `ethan-*` node folders are in `nodes/`; their runtime helpers beside this module
(runtime, frames, state, templates, logic, tools).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nodeloom.formats.options import FormatOptions


class EthanLoader:
    name = "ethan"

    def detect(self, document: Any, path: Path | None) -> bool:
        """An Ethan file has a `graph` section holding `nodes`, and no top-level `nodes`."""
        if not isinstance(document, Mapping) or "nodes" in document:
            return False
        graph = document.get("graph")
        return isinstance(graph, Mapping) and "nodes" in graph

    def to_graph(self, document: Any, options: FormatOptions) -> dict[str, Any]:
        from nodeloom.formats.ethan.convert import convert

        return convert(document, options)


loader = EthanLoader()

__all__ = ["EthanLoader", "loader"]
