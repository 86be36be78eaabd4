"""The node plugin contract, and how node folders are found and loaded.

What a node folder imports (also importable from `nodeloom.plugins.contract`):

    definition   Port, Parameter, NodeDefinition, COMMON_PARAMETERS, CATEGORIES, ERROR_PORT
    runtime      Event, ExecutionResult, InputRequest, FlowContext, FlowExecutor
    build        BuildContext, ToolsResult, AgentResult, MetadataResult, StructuralResult
    services     Services, CredentialSource, UserTool, BinaryStore
    subflows     FlowRunner, SavedFlow, ChildRun, calling_node (runs that start runs)

and what the engine and the server use to load them:

    discovery    the built-in catalogue and the formats' nodes, entry points,
                 NODELOOM_NODES_PATH
    registry     Registry (definitions by type id, executors imported on first use),
                 default_registry()

See docs/plugins.md.
"""

from nodeloom.plugins.build import (
    AgentResult,
    BuildContext,
    MetadataResult,
    StructuralResult,
    ToolsResult,
)
from nodeloom.plugins.definition import (
    CATEGORIES,
    COMMON_PARAMETERS,
    ERROR_PORT,
    ExecutionMode,
    NodeDefinition,
    Parameter,
    Port,
    SideEffects,
)
from nodeloom.plugins.registry import LoadedExecutor, Registry, default_registry
from nodeloom.plugins.runtime import (
    Event,
    EventSink,
    ExecutionResult,
    FlowContext,
    FlowExecutor,
    InputRequest,
    NodeEvent,
    calling_node,
)
from nodeloom.plugins.services import (
    BinaryStore,
    BinaryWriter,
    CredentialSource,
    Services,
    UserTool,
)
from nodeloom.plugins.subflows import ChildRun, FlowRunner, SavedFlow
from nodeloom.values import BinaryRef, DataValue

__all__ = [
    "CATEGORIES",
    "COMMON_PARAMETERS",
    "ERROR_PORT",
    "AgentResult",
    "BinaryRef",
    "BinaryStore",
    "BinaryWriter",
    "BuildContext",
    "ChildRun",
    "CredentialSource",
    "DataValue",
    "Event",
    "EventSink",
    "ExecutionMode",
    "ExecutionResult",
    "FlowContext",
    "FlowExecutor",
    "FlowRunner",
    "InputRequest",
    "LoadedExecutor",
    "MetadataResult",
    "NodeDefinition",
    "NodeEvent",
    "Parameter",
    "Port",
    "Registry",
    "SavedFlow",
    "Services",
    "SideEffects",
    "StructuralResult",
    "ToolsResult",
    "UserTool",
    "calling_node",
    "default_registry",
]
