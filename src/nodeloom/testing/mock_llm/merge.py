"""Several mock LLM scripts served as one (`nodeloom serve --mock-llm A --mock-llm B`):
their rules in order, file by file. With one script its `default` stays; with several, a
request no rule fits gets the zero-config answer (one flow's fallback reply must not answer
another flow)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nodeloom.testing.mock_llm.script import Script, load_script


def merged_script(paths: Sequence[str | Path]) -> Script:
    """Raises ScriptError naming the file of the first invalid script."""
    scripts = [load_script(str(path)) for path in paths]
    if len(scripts) == 1:
        return scripts[0]
    return Script(rules=[rule for script in scripts for rule in script.rules])
