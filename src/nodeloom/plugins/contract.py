"""The node plugin contract: everything a node folder needs, and nothing of the engine.

A node is a folder with two files:

- `definition.py` exports `definition`, a `NodeDefinition` (pure data: ports, parameters,
  behaviour). It must import nothing heavy: discovery imports every definition at start-up.
- `executor.py` exports `executor`, an object with `node_type` and `execute()` (flow)
  and/or `build()` (structural). It is imported only when a graph uses the node.

`execute(data, inputs, context)` receives the node's resolved parameters (`data`: wire >
expression > inline value > default), the values on its input ports (`inputs`: port id ->
`DataValue`) and a `FlowContext`. It returns an `ExecutionResult`, or is an async generator
that yields `Event`s (progress, tokens) and finally one `ExecutionResult`. The ports present
in `ExecutionResult.outputs` are the ports that fired; every other port is a dead branch.

The contract is written in four modules, gathered here and in `nodeloom.plugins`:
`definition` (ports, parameters, NodeDefinition, the common settings), `runtime` (Event,
ExecutionResult, InputRequest, FlowContext), `build` (BuildContext and the structural
results) and `services` (Services, CredentialSource, UserTool, BinaryStore).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from nodeloom.plugins.build import (
    AgentResult,
    BuildContext,
    MetadataResult,
    StructuralResult,
    ToolsResult,
)
from nodeloom.plugins.definition import (
    CATEGORIES,
    COMMON_PARAMETER_IDS,
    COMMON_PARAMETERS,
    ERROR_PORT,
    SIDE_EFFECTS,
    AsksFunction,
    CheckFunction,
    ExecutionMode,
    NodeDefinition,
    Parameter,
    ParameterType,
    Port,
    SideEffects,
    TriggerCheck,
)
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
    "COMMON_PARAMETER_IDS",
    "ERROR_PORT",
    "SIDE_EFFECTS",
    "AgentResult",
    "AsksFunction",
    "AsyncIterator",
    "BinaryRef",
    "BinaryStore",
    "BinaryWriter",
    "BuildContext",
    "CheckFunction",
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
    "MetadataResult",
    "NodeDefinition",
    "NodeEvent",
    "Parameter",
    "ParameterType",
    "Port",
    "SavedFlow",
    "Services",
    "SideEffects",
    "StructuralResult",
    "ToolsResult",
    "TriggerCheck",
    "UserTool",
    "calling_node",
]
