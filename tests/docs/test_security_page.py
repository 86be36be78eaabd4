"""docs/security.md names, for each protection, the test that proves it: every test it
names exists, so the page cannot point at a test that was renamed or removed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "security.md"
REFERENCE = re.compile(r"`(tests/[\w/.-]+\.py)(?:::(\w+))?`")


def test_every_test_the_security_page_names_exists():
    references = REFERENCE.findall(PAGE.read_text())
    assert len(references) > 20
    missing = []
    for path, name in references:
        source = ROOT / path
        if not source.exists():
            missing.append(path)
        elif name and not re.search(rf"^(async )?def {name}\(", source.read_text(), re.M):
            missing.append(f"{path}::{name}")
    assert missing == []
