"""The `plan-*` node folders a plan.json converts to (one folder per node type).

Discovery finds them as a built-in source beside nodes/; their runtime helpers are the
modules of nodeloom.formats.plan (steps, threads, toolbox, messages).
"""
