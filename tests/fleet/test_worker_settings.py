"""A worker's queue settings (NODELOOM_QUEUE_POLL_MS, NODELOOM_QUEUE_PREFETCH) are checked
before it starts: a bad one stops `nodeloom worker` with exit 2, naming it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ..server.conftest import nodeloom_executable, server_environment


@pytest.mark.parametrize("name", ["NODELOOM_QUEUE_POLL_MS", "NODELOOM_QUEUE_PREFETCH"])
def test_a_worker_with_a_bad_queue_setting_exits_2_naming_it(tmp_path: Path, name: str):
    env = {
        **server_environment(tmp_path),
        "NODELOOM_QUEUE_URL": "redis://127.0.0.1:1/0",
        "NODELOOM_DATABASE_URL": "postgresql://nodeloom@127.0.0.1:1/nodeloom",
        name: "fast",
    }
    done = subprocess.run(
        [nodeloom_executable(), "worker"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert f"{name} must be a whole number ≥ 1; got 'fast'" in done.stderr
