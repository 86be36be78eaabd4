"""The registry: definitions by type id, one owner per id, executors imported on first use
and checked against their definition."""

from __future__ import annotations

import sys

import pytest

import nodeloom
from nodeloom.errors import GraphError, PluginError
from nodeloom.plugins.discovery import path_sources
from nodeloom.plugins.registry import Registry, default_registry
from nodeloom.testing.builders import graph, node


@pytest.fixture
def faults(pack):
    """Built-ins plus executor_faults_pack; returns (registry, pack folder)."""
    root = pack("executor_faults_pack")
    registry = Registry.discover(paths=[str(root)], use_entry_points=False)
    assert not registry.failures, "executor faults must not show at discovery"
    return registry, root


def test_types_are_sorted_and_each_maps_to_its_definition(discover):
    registry = discover("good_pack")
    assert registry.types == sorted(registry.types)
    for type_id in registry.types:
        assert registry.definition(type_id).id == type_id
    assert registry.definition("fixture-nothing") is None
    assert registry.found("fixture-nothing") is None


def test_an_unknown_type_is_answered_with_the_closest_known_types():
    registry = Registry.discover(use_entry_points=False, use_environment=False)
    assert registry.unknown_type_message("prompt-templat") == (
        "unknown node type 'prompt-templat'; did you mean 'prompt-template'?"
    )


def test_an_unknown_type_with_no_close_match_points_at_nodeloom_nodes():
    registry = Registry.discover(use_entry_points=False, use_environment=False)
    assert registry.unknown_type_message("zzzz") == (
        "unknown node type 'zzzz'; run `nodeloom nodes` to list the "
        f"{len(registry.types)} known types"
    )


def test_asking_for_the_executor_of_an_unknown_type_raises_plugin_error_with_suggestions():
    registry = Registry.discover(use_entry_points=False, use_environment=False)
    with pytest.raises(PluginError) as caught:
        registry.executor("cod")
    assert str(caught.value) == "unknown node type 'cod'; did you mean 'code'?"


def test_an_executor_is_imported_on_first_use_and_then_reused(pack):
    root = pack("good_pack")
    registry = Registry.discover(paths=[str(root)], builtins=False, use_entry_points=False)
    [source] = path_sources(str(root))
    module = f"{source.package}.count.executor"
    assert module not in sys.modules
    first = registry.executor("fixture-count")
    assert module in sys.modules
    assert registry.executor("fixture-count") is first
    assert first.executor is sys.modules[module].executor


def test_how_to_call_an_executor_is_decided_once_from_its_methods(discover):
    loaded = discover("good_pack").executor("fixture-count")
    assert (loaded.has_execute, loaded.has_build, loaded.streaming) == (True, False, False)


def test_an_executor_that_fails_to_import_raises_naming_the_type_file_and_cause(faults):
    registry, root = faults
    with pytest.raises(PluginError) as caught:
        registry.executor("fixture-import-fails")
    assert str(caught.value) == (
        f"the executor of node type 'fixture-import-fails' "
        f"({root / 'import_fails' / 'executor.py'}) failed to import: "
        "ModuleNotFoundError: No module named 'nodeloom_fixture_missing_dependency'"
    )


def test_loading_a_graph_whose_executor_fails_to_import_is_invalid_not_a_crash(faults):
    registry, _ = faults
    with pytest.raises(GraphError) as caught:
        nodeloom.load(graph(node("bad", "fixture-import-fails")), registry=registry)
    [issue] = caught.value.issues
    assert issue.code == "plugin_unavailable"
    assert "No module named 'nodeloom_fixture_missing_dependency'" in issue.message


async def test_a_broken_executor_never_stops_other_node_types_from_running(faults):
    registry, _ = faults
    with pytest.raises(PluginError):
        registry.executor("fixture-import-fails")
    result = await nodeloom.load(
        graph(node("p", "prompt-template", template="still fine")), registry=registry
    ).run()
    assert result.outputs["p"] == {"output": {"text": "still fine"}}


def test_an_executor_whose_node_type_differs_from_the_definition_id_is_refused(faults):
    registry, root = faults
    with pytest.raises(PluginError) as caught:
        registry.executor("fixture-wrong-type")
    assert str(caught.value) == (
        f"{root / 'wrong_type' / 'executor.py'}: executor.node_type is "
        "'fixture-something-else', but the definition's id is 'fixture-wrong-type'"
    )


def test_an_executor_module_without_an_executor_export_is_refused(faults):
    registry, root = faults
    with pytest.raises(PluginError) as caught:
        registry.executor("fixture-no-executor-export")
    assert str(caught.value) == (
        f"{root / 'no_executor_export' / 'executor.py'} must export `executor`"
    )


def test_an_executor_with_neither_execute_nor_build_is_refused(faults):
    registry, root = faults
    with pytest.raises(PluginError) as caught:
        registry.executor("fixture-no-methods")
    assert str(caught.value) == (
        f"{root / 'no_methods' / 'executor.py'}: the executor implements "
        "neither execute() nor build()"
    )


def test_a_plugin_cannot_replace_a_built_in_type_and_the_attempt_is_reported(pack):
    root = pack("duplicate_pack")
    registry = Registry.discover(paths=[str(root)], use_entry_points=False)
    code = registry.found("code")
    assert (code.origin, code.definition.name) == ("builtin", "Code")
    [failure] = [f for f in registry.failures if f.location == str(root / "code")]
    assert failure.origin == "NODELOOM_NODES_PATH"
    assert failure.error == (
        f"node type 'code' is already defined by {code.folder} (builtin); this one is ignored"
    )


def test_a_type_id_defined_twice_keeps_the_first_folder_and_reports_the_second(pack):
    root = pack("duplicate_pack")
    registry = Registry.discover(paths=[str(root)], builtins=False, use_entry_points=False)
    kept = registry.found("fixture-twin")
    assert kept.folder == root / "twin_a"
    [failure] = [f for f in registry.failures if f.location == str(root / "twin_b")]
    assert failure.error == (
        f"node type 'fixture-twin' is already defined by {root / 'twin_a'} "
        "(NODELOOM_NODES_PATH); this one is ignored"
    )


def test_the_default_registry_is_discovered_once_per_process():
    assert default_registry() is default_registry()
