"""The plugin contract keeps its import paths, and its docs agree with the engine."""

import re

import nodeloom.plugins
import nodeloom.plugins.contract as contract
from nodeloom.engine.events import NODE_EVENT_TYPES, RUN_EVENT_TYPES
from nodeloom.plugins.runtime import Event

# Every name `nodeloom.plugins.contract` offered when it was one module.
CONTRACT_NAMES = [
    "CATEGORIES",
    "COMMON_PARAMETERS",
    "COMMON_PARAMETER_IDS",
    "ERROR_PORT",
    "SIDE_EFFECTS",
    "AgentResult",
    "AsyncIterator",
    "BinaryRef",
    "BuildContext",
    "CheckFunction",
    "CredentialSource",
    "DataValue",
    "Event",
    "ExecutionMode",
    "ExecutionResult",
    "FlowContext",
    "FlowExecutor",
    "InputRequest",
    "MetadataResult",
    "NodeDefinition",
    "NodeEvent",
    "Parameter",
    "ParameterType",
    "Port",
    "Services",
    "SideEffects",
    "StructuralResult",
    "ToolsResult",
    "TriggerCheck",
]


def test_every_name_of_the_contract_module_is_still_importable_from_it():
    missing = [name for name in CONTRACT_NAMES if not hasattr(contract, name)]
    assert missing == []


def test_the_plugins_package_offers_the_same_objects_as_the_contract_module():
    for name in nodeloom.plugins.__all__:
        if hasattr(contract, name):
            assert getattr(nodeloom.plugins, name) is getattr(contract, name), name


def test_the_event_docstring_names_exactly_the_event_types_the_engine_emits():
    text = " ".join((Event.__doc__ or "").split())
    listed = re.findall(r"(?:Node|Run) event types: ([^.]*)\.", text)
    named = {name.strip() for names in listed for name in names.split(",")}
    assert named == set(NODE_EVENT_TYPES) | set(RUN_EVENT_TYPES)
