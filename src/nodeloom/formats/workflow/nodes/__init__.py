"""The `workflow-*` node folders a workflow converts to (one folder per node type).

Discovery finds them as a built-in source beside nodes/; the format's loader and log
reader are the modules of nodeloom.formats.workflow.
"""
