"""The built-in node catalogue: one folder per node type, grouped by category
(core, ai, tools, flow, data, integration, utility, formats).

Each folder holds `definition.py` (pure data) and `executor.py`; discovery
(nodeloom.plugins.discovery) finds them, so nothing here is imported by name. See
docs/plugins.md for writing one.
"""
