"""Every built-in node folder (nodes/, and each format's formats/<name>/nodes/) keeps the
node contract: a definition and an executor that
agree on the type id, a catalogue page in docs/nodes/ and a README beside the code, and a
definition light enough to import at start-up.

Each test checks every folder and fails listing all the offenders at once.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nodeloom.formats.registry import FORMATS
from nodeloom.plugins.contract import NodeDefinition
from nodeloom.plugins.discovery import FORMATS_ROOT, NodeSource, builtin_sources

DOCS = Path(__file__).resolve().parents[2] / "docs" / "nodes"


SOURCES = builtin_sources()
PACKAGE_ROOT = SOURCES[0].root.parent  # src/nodeloom


def node_folders() -> list[Path]:
    """Folders under the built-in sources holding a definition.py or an executor.py."""
    folders = {
        path.parent
        for source in SOURCES
        for name in ("definition.py", "executor.py")
        for path in source.root.rglob(name)
        if "__pycache__" not in path.parts
    }
    return sorted(folders)


def source_of(folder: Path) -> NodeSource:
    return next(s for s in SOURCES if folder.is_relative_to(s.root))


def module_of(folder: Path) -> str:
    source = source_of(folder)
    return ".".join((source.package, *folder.relative_to(source.root).parts))


def named(folders: list[Path]) -> str:
    return ", ".join(str(f.relative_to(PACKAGE_ROOT)) for f in folders)


@pytest.fixture(scope="module")
def definitions() -> dict[Path, NodeDefinition]:
    found = {}
    for folder in node_folders():
        if (folder / "definition.py").is_file():
            module = importlib.import_module(f"{module_of(folder)}.definition")
            found[folder] = module.definition
    return found


def test_the_walk_finds_node_folders_so_the_checks_below_are_not_vacuous():
    assert node_folders(), f"no node folder found under {PACKAGE_ROOT}"


def test_the_walk_finds_the_node_folders_of_every_foreign_format():
    formats = {entry.split(":")[0].rsplit(".", 1)[1] for entry in FORMATS}
    with_nodes = {
        folder.relative_to(FORMATS_ROOT).parts[0]
        for folder in node_folders()
        if folder.is_relative_to(FORMATS_ROOT)
    }
    assert formats <= with_nodes, f"no node folder found for: {formats - with_nodes}"


def test_a_formats_node_folders_live_with_the_format_not_under_nodes():
    assert not (PACKAGE_ROOT / "nodes" / "formats").exists(), (
        "a format's node folders live in formats/<name>/nodes/, not nodes/formats/"
    )


def test_every_node_folder_with_a_definition_has_an_executor():
    missing = [f for f in node_folders() if not (f / "executor.py").is_file()]
    assert not missing, f"definition.py without executor.py in: {named(missing)}"


def test_every_node_folder_with_an_executor_has_a_definition():
    missing = [f for f in node_folders() if not (f / "definition.py").is_file()]
    assert not missing, f"executor.py without definition.py in: {named(missing)}"


def test_every_definition_module_exports_a_node_definition(definitions):
    wrong = [f for f, d in definitions.items() if not isinstance(d, NodeDefinition)]
    assert not wrong, f"`definition` is not a NodeDefinition in: {named(wrong)}"


def test_every_executor_declares_the_type_id_of_its_definition(definitions):
    mismatched = []
    for folder, definition in definitions.items():
        if (folder / "executor.py").is_file():
            executor = importlib.import_module(f"{module_of(folder)}.executor").executor
            node_type = getattr(executor, "node_type", None)
            if node_type != definition.id:
                mismatched.append(f"{folder.name}: {node_type!r} != {definition.id!r}")
    assert not mismatched, "executor.node_type differs from definition.id: " + "; ".join(mismatched)


def test_every_built_in_type_has_a_page_in_docs_nodes(definitions):
    missing = sorted(d.id for d in definitions.values() if not (DOCS / f"{d.id}.md").is_file())
    assert not missing, f"no docs/nodes/<type-id>.md page for: {', '.join(missing)}"


def test_every_built_in_node_folder_has_a_readme(definitions):
    missing = [f for f in definitions if not (f / "README.md").is_file()]
    assert not missing, f"no README.md in: {named(missing)}"


def test_loading_every_definition_imports_no_executor_and_nothing_heavy():
    script = textwrap.dedent(
        """
        import json, sys
        from nodeloom.plugins.registry import Registry

        before = set(sys.modules)
        registry = Registry.discover(use_entry_points=False, use_environment=False)
        new = set(sys.modules) - before
        print(json.dumps({
            "types": registry.types,
            "third_party": sorted({
                name.split(".")[0] for name in new
                if name.split(".")[0] not in sys.stdlib_module_names
                and name.split(".")[0] != "nodeloom"
            }),
            "executors": sorted(name for name in new if name.endswith(".executor")),
            "heavy": sorted(
                name for name in sys.modules
                if name.split(".")[0] in ("httpx", "httpcore", "anyio", "jsonata", "yaml")
            ),
        }))
        """
    )
    process = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert process.returncode == 0, process.stderr
    report = json.loads(process.stdout)
    assert report["types"], "discovery found no built-in node"
    assert report["executors"] == [], "discovery imported executors"
    assert report["third_party"] == [], "definitions imported third-party packages"
    assert report["heavy"] == [], "heavy dependencies are loaded after discovery"
