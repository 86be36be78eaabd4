"""Every ```python block in docs/ runs as written (each in a fresh interpreter)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks():
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for number, match in enumerate(BLOCK.finditer(page.read_text(encoding="utf-8")), 1):
            yield pytest.param(match.group(1), id=f"{page.relative_to(ROOT)}#{number}")


@pytest.mark.parametrize("code", list(blocks()))
def test_the_documented_code_runs(code, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "AGNO_TELEMETRY": "false", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
