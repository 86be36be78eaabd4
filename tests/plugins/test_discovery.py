"""Discovery: node folders found by walking the built-in tree, the packages named by
`nodeloom.nodes` entry points and the folders in NODELOOM_NODES_PATH; each plugin's
import isolated; definitions only, never executors."""

from __future__ import annotations

import os
import sys

import nodeloom
from nodeloom.plugins.discovery import (
    BUILTIN_ROOT,
    FORMATS_ROOT,
    PATH_VARIABLE,
    builtin_sources,
    path_sources,
)
from nodeloom.plugins.registry import Registry
from nodeloom.testing.builders import edge, graph, node


def package_of(root):
    [source] = path_sources(str(root))
    return source.package


def failure_at(registry, folder):
    [failure] = [f for f in registry.failures if f.location == str(folder)]
    return failure


def shout_graph():
    return graph(
        node("start", "chat-start"), node("shout", "fixture-shout"), edge("start", "shout")
    )


# --- the built-in tree --------------------------------------------------------------------


def test_every_folder_with_a_definition_under_nodes_is_discovered_without_a_central_list():
    registry = Registry.discover(use_entry_points=False, use_environment=False)
    on_disk = {
        path.parent
        for source in builtin_sources()
        for path in source.root.rglob("definition.py")
        if "__pycache__" not in path.parts
    }
    found = {registry.found(t).folder for t in registry.types}
    assert found == on_disk
    assert not registry.failures, registry.failures


def test_a_built_in_node_imports_under_the_dotted_path_of_its_folder():
    registry = Registry.discover(use_entry_points=False, use_environment=False)
    found = registry.found("chat-start")
    assert found.module == "nodeloom.nodes.core.chat_start"
    assert found.folder == BUILTIN_ROOT / "core" / "chat_start"
    assert found.origin == "builtin"


def test_a_formats_node_is_built_in_and_imports_from_the_formats_own_folder():
    registry = Registry.discover(use_entry_points=False, use_environment=False)
    found = registry.found("ethan-start")
    assert found.module == "nodeloom.formats.ethan.nodes.start"
    assert found.folder == FORMATS_ROOT / "ethan" / "nodes" / "start"
    assert found.origin == "builtin"
    assert [s.root for s in builtin_sources()] == [
        BUILTIN_ROOT,
        *(FORMATS_ROOT / name / "nodes" for name in ("ethan", "plan", "workflow")),
    ]


def test_a_node_folder_added_to_a_pack_is_found_on_the_next_discovery(pack):
    root = pack("good_pack")
    registry = Registry.discover(paths=[str(root)], builtins=False, use_entry_points=False)
    assert registry.types == ["fixture-count", "fixture-shout"]
    added = root / "deeper" / "still" / "added"
    added.mkdir(parents=True)
    (added / "definition.py").write_text(
        "from nodeloom.plugins.contract import NodeDefinition\n\n"
        'definition = NodeDefinition(id="fixture-added", name="Added", category="utility")\n'
    )
    (added / "executor.py").write_text("executor = None\n")
    again = Registry.discover(paths=[str(root)], builtins=False, use_entry_points=False)
    assert again.types == ["fixture-added", "fixture-count", "fixture-shout"]
    assert again.found("fixture-added").module == f"{package_of(root)}.deeper.still.added"


# --- NODELOOM_NODES_PATH ------------------------------------------------------------------


def test_every_folder_in_nodeloom_nodes_path_is_discovered(pack, monkeypatch):
    good, lazy = pack("good_pack"), pack("lazy_pack")
    monkeypatch.setenv(PATH_VARIABLE, os.pathsep.join([str(good), str(lazy)]))
    registry = Registry.discover(use_entry_points=False)
    for type_id in ("fixture-shout", "fixture-count", "fixture-heavy"):
        assert registry.found(type_id).origin == "NODELOOM_NODES_PATH"
    assert registry.found("fixture-heavy").folder == lazy / "heavy_node"
    assert "chat-start" in registry.types


def test_empty_entries_in_nodeloom_nodes_path_are_ignored(pack, monkeypatch):
    good = pack("good_pack")
    monkeypatch.setenv(PATH_VARIABLE, os.pathsep.join(["", str(good), " "]))
    registry = Registry.discover(use_entry_points=False)
    assert not registry.failures, registry.failures
    assert "fixture-shout" in registry.types


def test_a_nodes_path_entry_that_is_not_a_folder_is_reported_and_the_rest_still_load(
    pack, monkeypatch, tmp_path
):
    missing = tmp_path / "no-such-folder"
    monkeypatch.setenv(PATH_VARIABLE, os.pathsep.join([str(missing), str(pack("good_pack"))]))
    registry = Registry.discover(use_entry_points=False)
    failure = failure_at(registry, missing)
    assert (failure.origin, failure.error) == ("NODELOOM_NODES_PATH", "not a folder")
    assert "fixture-shout" in registry.types


async def test_external_node_folders_import_sibling_modules_relatively(discover):
    registry = discover("good_pack")
    assert registry.definition("fixture-shout").name == "Shout", "imported from ./labels.py"
    result = await nodeloom.load(shout_graph(), registry=registry).run("hey")
    assert result.ok, result.error
    assert result.outputs["shout"] == {"output": "HEY!"}, "from ./transform and ../../shared"


def test_external_nodes_import_under_a_package_named_after_their_folder(pack):
    root = pack("good_pack")
    registry = Registry.discover(paths=[str(root)], builtins=False, use_entry_points=False)
    found = registry.found("fixture-shout")
    assert found.module == f"{package_of(root)}.text.shout"
    assert sys.modules[package_of(root)].__path__ == [str(root)]


# --- entry points -------------------------------------------------------------------------


def test_an_entry_point_naming_a_package_contributes_the_node_folders_in_it(site, unique):
    package = unique("fixture_entry_nodes")
    site.package(package, "good_pack")
    site.distribution(unique("nodeloom-fixture"), {"fixture-pack": package})
    registry = Registry.discover(use_environment=False)
    found = registry.found("fixture-shout")
    assert found.origin == "entry point fixture-pack"
    assert found.module == f"{package}.text.shout"
    assert registry.found("fixture-count").origin == "entry point fixture-pack"


async def test_nodes_from_an_entry_point_package_run_with_their_relative_imports(site, unique):
    package = unique("fixture_entry_nodes")
    site.package(package, "good_pack")
    site.distribution(unique("nodeloom-fixture"), {"fixture-pack": package})
    registry = Registry.discover(use_environment=False)
    result = await nodeloom.load(shout_graph(), registry=registry).run("entry")
    assert result.outputs["shout"] == {"output": "ENTRY!"}


def test_an_entry_point_that_fails_to_import_is_reported_and_the_others_still_load(site, unique):
    package, missing = unique("fixture_entry_nodes"), unique("fixture_not_installed")
    site.package(package, "good_pack")
    site.distribution(unique("nodeloom-fixture"), {"broken": missing, "working": package})
    registry = Registry.discover(use_environment=False)
    [failure] = [f for f in registry.failures if f.origin == "entry point broken"]
    assert failure.location == missing
    assert failure.error == f"ModuleNotFoundError: No module named '{missing}'"
    assert "Traceback" in failure.detail
    assert registry.found("fixture-shout").origin == "entry point working"


def test_an_entry_point_naming_a_plain_module_is_reported_as_not_a_package(site, unique):
    module = unique("fixture_plain_module")
    site.module(module, "VALUE = 1\n")
    site.distribution(unique("nodeloom-fixture"), {"plain": module})
    registry = Registry.discover(use_environment=False)
    [failure] = [f for f in registry.failures if f.origin == "entry point plain"]
    assert failure.error == "the entry point must name a package whose folder holds node folders"


# --- isolated failures --------------------------------------------------------------------


def test_a_definition_that_raises_on_import_is_reported_with_its_error_and_traceback(pack):
    root = pack("broken_pack")
    registry = Registry.discover(paths=[str(root)], use_entry_points=False)
    failure = failure_at(registry, root / "exploding")
    assert failure.origin == "NODELOOM_NODES_PATH"
    assert failure.error == "RuntimeError: fixture definition exploded on purpose"
    assert "exploding/definition.py" in failure.detail


def test_a_broken_plugin_never_takes_the_other_nodes_down(pack):
    registry = Registry.discover(paths=[str(pack("broken_pack"))], use_entry_points=False)
    builtins = Registry.discover(use_entry_points=False, use_environment=False)
    assert set(registry.types) == {*builtins.types, "fixture-fine"}


def test_a_definition_module_without_a_definition_export_is_reported_naming_the_export(pack):
    root = pack("broken_pack")
    registry = Registry.discover(paths=[str(root)], builtins=False, use_entry_points=False)
    failure = failure_at(registry, root / "no_export")
    assert failure.error == "TypeError: definition.py must export `definition`, a NodeDefinition"


def test_a_folder_with_a_definition_but_no_executor_is_reported(pack):
    root = pack("broken_pack")
    registry = Registry.discover(paths=[str(root)], builtins=False, use_entry_points=False)
    failure = failure_at(registry, root / "no_executor")
    assert failure.error == "FileNotFoundError: the folder has no executor.py"
    assert "fixture-no-executor" not in registry.types


def test_a_failure_serialises_to_origin_location_and_error(pack):
    root = pack("broken_pack")
    registry = Registry.discover(paths=[str(root)], builtins=False, use_entry_points=False)
    assert failure_at(registry, root / "exploding").to_json() == {
        "origin": "NODELOOM_NODES_PATH",
        "location": str(root / "exploding"),
        "error": "RuntimeError: fixture definition exploded on purpose",
    }


# --- definitions only ---------------------------------------------------------------------


def test_discovery_imports_definitions_and_never_executors_or_their_dependencies(pack):
    root = pack("lazy_pack")
    module = f"{package_of(root)}.heavy_node"
    registry = Registry.discover(paths=[str(root)], builtins=False, use_entry_points=False)
    assert registry.types == ["fixture-heavy"]
    assert f"{module}.definition" in sys.modules
    assert f"{module}.executor" not in sys.modules
    assert f"{module}.heavy_dependency" not in sys.modules


def test_an_executor_and_its_dependencies_are_imported_when_first_used(pack):
    root = pack("lazy_pack")
    module = f"{package_of(root)}.heavy_node"
    registry = Registry.discover(paths=[str(root)], builtins=False, use_entry_points=False)
    registry.executor("fixture-heavy")
    assert f"{module}.executor" in sys.modules
    assert f"{module}.heavy_dependency" in sys.modules


def test_each_found_node_records_its_origin_and_how_long_its_definition_took_to_load(pack):
    registry = Registry.discover(paths=[str(pack("good_pack"))], use_entry_points=False)
    for type_id in registry.types:
        found = registry.found(type_id)
        assert found.load_ms >= 0
        assert found.origin in ("builtin", "NODELOOM_NODES_PATH")
