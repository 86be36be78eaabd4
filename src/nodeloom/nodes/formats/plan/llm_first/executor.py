from nodeloom.formats.plan.executors import PlanStepExecutor

executor = PlanStepExecutor("plan-llm-first")
