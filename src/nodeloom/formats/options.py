from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class FormatOptions:
    """What a format may need beyond the file (CLI: --var, --pattern, --tools,
    --max-subgraph-depth). `base_dir` is the file's folder: relative paths in the file
    (Python tools, subgraph files) resolve against it."""

    variables: dict[str, Any] = field(default_factory=dict)
    pattern: str | None = None
    tools: tuple[str, ...] = ()
    max_subgraph_depth: int | None = None
    base_dir: Path = field(default_factory=Path.cwd)
