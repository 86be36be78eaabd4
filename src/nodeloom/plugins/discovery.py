"""Finding node folders: the built-in catalogue, the formats' nodes, entry points, and
NODELOOM_NODES_PATH.

A node folder is any folder holding a `definition.py` (and its `executor.py`). Discovery
imports only definitions; each import is isolated, so a broken plugin is reported with
its error and never takes the others down (as ComfyUI's custom-node loader does).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import time
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from nodeloom.plugins.contract import NodeDefinition

ENTRY_POINT_GROUP = "nodeloom.nodes"
PATH_VARIABLE = "NODELOOM_NODES_PATH"
BUILTIN_ROOT = Path(__file__).resolve().parent.parent / "nodes"
# A format's node folders live with the format: formats/<name>/nodes/<node>/.
FORMATS_ROOT = Path(__file__).resolve().parent.parent / "formats"


@dataclass(frozen=True, slots=True)
class NodeSource:
    """A tree of node folders and the package name its modules import under."""

    origin: str  # "builtin", "entry point <name>", "NODELOOM_NODES_PATH"
    root: Path
    package: str


@dataclass(frozen=True, slots=True)
class FoundNode:
    definition: NodeDefinition
    folder: Path
    module: str  # dotted name of the folder's package; executor is `<module>.executor`
    origin: str
    load_ms: float


@dataclass(frozen=True, slots=True)
class PluginFailure:
    origin: str
    location: str
    error: str
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return {"origin": self.origin, "location": self.location, "error": self.error}


def builtin_sources() -> list[NodeSource]:
    """The native catalogue (nodes/), then each format's node folders (formats/<name>/nodes/)."""
    sources = [NodeSource("builtin", BUILTIN_ROOT, "nodeloom.nodes")]
    for root in sorted(FORMATS_ROOT.glob("*/nodes")):
        if (root / "__init__.py").is_file():
            package = f"nodeloom.formats.{root.parent.name}.nodes"
            sources.append(NodeSource("builtin", root, package))
    return sources


def path_sources(value: str | None = None) -> list[NodeSource]:
    """Sources from NODELOOM_NODES_PATH (os.pathsep-separated folders)."""
    raw = os.environ.get(PATH_VARIABLE, "") if value is None else value
    sources = []
    for part in raw.split(os.pathsep):
        if part.strip():
            root = Path(part).expanduser().resolve()
            sources.append(NodeSource(PATH_VARIABLE, root, _external_package(root)))
    return sources


def entry_point_sources(failures: list[PluginFailure]) -> list[NodeSource]:
    """Sources from installed distributions' `nodeloom.nodes` entry points (packages)."""
    sources = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        origin = f"entry point {ep.name}"
        try:
            module = ep.load()
        except Exception as exc:  # a broken third-party package must not stop discovery
            failures.append(PluginFailure(origin, ep.value, _describe(exc), traceback.format_exc()))
            continue
        if not isinstance(module, ModuleType) or not getattr(module, "__path__", None):
            failures.append(
                PluginFailure(
                    origin,
                    ep.value,
                    "the entry point must name a package whose folder holds node folders",
                )
            )
            continue
        sources.append(NodeSource(origin, Path(next(iter(module.__path__))), module.__name__))
    return sources


def scan(sources: Iterable[NodeSource], failures: list[PluginFailure]) -> Iterator[FoundNode]:
    """Import the definition of every node folder under the sources."""
    for source in sources:
        if not source.root.is_dir():
            failures.append(PluginFailure(source.origin, str(source.root), "not a folder"))
            continue
        if source.origin != "builtin" and source.package not in sys.modules:
            _register_package(source)
        for definition_file in sorted(source.root.rglob("definition.py")):
            folder = definition_file.parent
            if "__pycache__" in folder.parts:
                continue
            relative = folder.relative_to(source.root).parts
            module = ".".join((source.package, *relative))
            started = time.perf_counter()
            try:
                loaded = importlib.import_module(f"{module}.definition")
                definition = getattr(loaded, "definition", None)
                if not isinstance(definition, NodeDefinition):
                    raise TypeError("definition.py must export `definition`, a NodeDefinition")
                if not (folder / "executor.py").is_file():
                    raise FileNotFoundError("the folder has no executor.py")
            except Exception as exc:
                failures.append(
                    PluginFailure(
                        source.origin, str(folder), _describe(exc), traceback.format_exc()
                    )
                )
                continue
            yield FoundNode(
                definition, folder, module, source.origin, (time.perf_counter() - started) * 1000
            )


def _register_package(source: NodeSource) -> None:
    """Make an external folder importable as a package, so its modules can import
    their siblings (relative imports work as in any package)."""
    spec = importlib.machinery.ModuleSpec(source.package, None, is_package=True)
    spec.submodule_search_locations = [str(source.root)]
    sys.modules[source.package] = importlib.util.module_from_spec(spec)


def _external_package(root: Path) -> str:
    digest = hashlib.sha1(str(root).encode()).hexdigest()[:10]
    return f"nodeloom_plugins_{digest}"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
