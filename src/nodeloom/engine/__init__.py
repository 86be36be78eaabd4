"""The engine: load a graph, build it, run it. The public names are re-exported by
`nodeloom` (`load`, `Flow`, `RunSettings`, `RunResult`, `RunStatus`, the sinks); the modules
below are what they are made of, each with one job.

- `flow`: the public face, `load()` a graph then `run()` / `stream()` / `resume()` it;
  `execution`: one run (phase 1, then the flow) and how it ended (`result`).
- `topology`: compile a checked graph into a `FlowPlan`; `build`: phase 1, the structural
  build; `answers`: answers given ahead of time, checked before a run starts.
- `plan`: the pure readiness and skip rules, as named predicates; `scheduler`: the ready
  queue, workers and concurrency cap (a graph run's base class: one object per run);
  `run`: the run loop composing them, where every node `outcome` lands
  (`FlowRun.commit`); `inputs`: a node's inputs and parameters, and a run's trigger;
  `attempt`: calling an executor (timeouts, retries, the contract); `replay`: pinned and
  recorded outputs; `failures`: every failure payload.
- `context`: the run's frozen `RunContext`, its mutable `RunState` and `RunSettings`;
  `node_context`: what a running node sees (`NodeContext`, through a read-only `RunView`).
- `events`: sinks; `redaction`: credential values masked in all a run reports; `human`:
  waiting nodes and their answers; `checkpoint` and `position`: how a run is recorded and
  taken up again (docs/durable-runs.md).
"""
