"""nodeloom: a Python engine for agent workflows.

import nodeloom
flow = nodeloom.load("examples/hello.json")
result = await flow.run("Hi")
"""

from nodeloom.engine.context import RunSettings
from nodeloom.engine.events import EventSink, ListSink, NullSink, QueueSink
from nodeloom.engine.flow import Flow, load
from nodeloom.engine.result import RunResult, RunStatus
from nodeloom.errors import (
    GraphError,
    Issue,
    NodeError,
    NodeloomError,
)
from nodeloom.plugins.contract import (
    Event,
    ExecutionResult,
    FlowContext,
    NodeDefinition,
    NodeEvent,
    Parameter,
    Port,
)
from nodeloom.plugins.registry import Registry, default_registry
from nodeloom.values import BinaryRef, DataValue

__version__ = "0.1.0"

__all__ = [
    "BinaryRef",
    "DataValue",
    "Event",
    "EventSink",
    "ExecutionResult",
    "Flow",
    "FlowContext",
    "GraphError",
    "Issue",
    "ListSink",
    "NodeDefinition",
    "NodeError",
    "NodeEvent",
    "NodeloomError",
    "NullSink",
    "Parameter",
    "Port",
    "QueueSink",
    "Registry",
    "RunResult",
    "RunSettings",
    "RunStatus",
    "__version__",
    "default_registry",
    "load",
]
