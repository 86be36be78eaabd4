"""`graph/` stands alone: it reads node types through its own protocols, never `plugins/`."""

import ast
from pathlib import Path

import nodeloom.graph
from nodeloom.graph.definitions import (
    SETTINGS,
    SIDE_EFFECTS,
    Definitions,
    DefinitionSpec,
    ParameterSpec,
)
from nodeloom.plugins.contract import COMMON_PARAMETER_IDS, COMMON_PARAMETERS
from nodeloom.plugins.registry import Registry


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_graph_module_imports_the_plugins_package():
    root = Path(nodeloom.graph.__file__).parent
    offenders = {
        f"{path.name}: {module}"
        for path in root.rglob("*.py")
        for module in imported_modules(path)
        if module == "nodeloom.plugins" or module.startswith("nodeloom.plugins.")
    }
    assert offenders == set()


def test_the_settings_graph_checks_are_the_common_parameters_plugins_declare():
    assert SETTINGS == COMMON_PARAMETER_IDS
    side_effects = next(p for p in COMMON_PARAMETERS if p.id == "side_effects")
    assert side_effects.options == SIDE_EFFECTS


def members(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")}


def test_the_plugin_contract_offers_everything_the_graph_protocols_read():
    registry = Registry.discover(use_entry_points=False, use_environment=False)
    assert members(Definitions) - set(dir(registry)) == set()
    for type_id in registry.types:
        definition = registry.definition(type_id)
        assert members(DefinitionSpec) - set(dir(definition)) == set(), type_id
        for parameter in definition.parameters:
            assert members(ParameterSpec) - set(dir(parameter)) == set(), type_id
