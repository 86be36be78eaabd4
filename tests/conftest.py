import os

import pytest

os.environ.setdefault("AGNO_TELEMETRY", "false")

pytest_plugins = [
    "nodeloom.testing.mock_llm.pytest_plugin",
    "nodeloom.testing.stores.pytest_plugin",
    "nodeloom.testing.flowtest.pytest_plugin",
]


@pytest.fixture(autouse=True)
def data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test keeps nodeloom's data (agent sessions, ...) in its own temporary folder."""
    path = tmp_path_factory.mktemp("nodeloom-data")
    monkeypatch.setenv("NODELOOM_DATA_DIR", str(path))
    return path
