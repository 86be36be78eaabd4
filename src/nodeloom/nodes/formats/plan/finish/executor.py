from nodeloom.formats.plan.executors import PlanFinishExecutor

executor = PlanFinishExecutor()
