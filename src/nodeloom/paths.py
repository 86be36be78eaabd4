"""Where nodeloom keeps data on this machine: NODELOOM_DATA_DIR, else the user data dir."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from nodeloom.plugins.contract import Services
from nodeloom.secrets import Vault
from nodeloom.user_tools import load_user_tools, user_tools_file


def data_dir() -> Path:
    configured = os.environ.get("NODELOOM_DATA_DIR")
    return Path(configured) if configured else Path(platformdirs.user_data_dir("nodeloom"))


def default_services() -> Services:
    root = data_dir()
    return Services(
        data_dir=root,
        session_db_file=root / "agent_sessions.db",
        credentials=Vault(root),
        user_tools=load_user_tools(user_tools_file(root)),
    )
