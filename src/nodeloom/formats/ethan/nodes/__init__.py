"""The `ethan-*` node folders an Ethan graph converts to (one folder per node type).

Discovery finds them as a built-in source beside nodes/; their runtime helpers are the
modules of nodeloom.formats.ethan (runtime, frames, state, templates, logic).
"""
