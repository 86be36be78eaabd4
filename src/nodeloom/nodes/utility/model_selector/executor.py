from typing import Any

from nodeloom.models import parse_reference, with_overrides
from nodeloom.plugins.contract import (
    BuildContext,
    DataValue,
    ExecutionResult,
    FlowContext,
    MetadataResult,
)


def _model(data: dict[str, Any], where: str) -> dict[str, Any]:
    spec = parse_reference(data.get("model"), where=f"{where}: model")
    return with_overrides(spec, base_url=data.get("base_url")).public()


class ModelSelectorExecutor:
    """Its value is known before the flow runs, so agents compiled in phase 1 can use it."""

    node_type = "model-selector"

    def build(self, data: dict[str, Any], context: BuildContext) -> MetadataResult:
        return MetadataResult({"model": _model(data, context.node_name)})

    async def execute(
        self, data: dict[str, Any], inputs: dict[str, DataValue], context: FlowContext
    ) -> ExecutionResult:
        return ExecutionResult({"model": _model(data, context.node_name)})


executor = ModelSelectorExecutor()
