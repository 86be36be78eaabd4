"""plan-tool-first: plan-llm-first's executor (nodeloom.formats.plan.steps tells the kinds
apart: a tool-first node runs its initial tool into its thread first)."""

from nodeloom.formats.plan.nodes.llm_first.executor import PlanStepExecutor

executor = PlanStepExecutor("plan-tool-first")
