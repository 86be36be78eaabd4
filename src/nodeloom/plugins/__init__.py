"""The node plugin contract (see `nodeloom.plugins.contract`): node folders import these
names from `nodeloom.plugins`, never from its modules."""

from nodeloom.plugins.contract import (
    CATEGORIES,
    AgentResult,
    BinaryRef,
    BuildContext,
    DataValue,
    Event,
    ExecutionResult,
    FlowContext,
    NodeDefinition,
    Parameter,
    Port,
    Services,
    ToolsResult,
)

__all__ = [
    "CATEGORIES",
    "AgentResult",
    "BinaryRef",
    "BuildContext",
    "DataValue",
    "Event",
    "ExecutionResult",
    "FlowContext",
    "NodeDefinition",
    "Parameter",
    "Port",
    "Services",
    "ToolsResult",
]
