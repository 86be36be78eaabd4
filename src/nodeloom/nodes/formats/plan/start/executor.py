from nodeloom.formats.plan.executors import PlanStartExecutor

executor = PlanStartExecutor()
