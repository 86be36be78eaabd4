"""What a server is started with."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from nodeloom.paths import data_dir

DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class ServerConfig:
    """`dev`: no authentication (only on a loopback address, see `nodeloom serve`).
    `database_url`: the run store's (None: NODELOOM_DATABASE_URL or the default SQLite
    file). `tokens_file`: where API tokens are kept (default `<data dir>/tokens.json`).
    `flows`: graph files (or folders of them) saved as flows at start-up (see seed.py).
    `public_hosts`: host names besides loopback ones that `dev` answers (see origin.py).
    `queue_url`: a Redis URL: launches are enqueued for `nodeloom worker`s, not run here
    (needs the Postgres store; see docs/deployment.md). `settle_heap`: the app owns its
    process (`nodeloom serve`): once started, it takes what it holds out of the garbage
    collector's scans (nodeloom.observability.heap); a test's app leaves the policy alone."""

    dev: bool = False
    database_url: str | None = None
    tokens_file: Path = field(default_factory=lambda: data_dir() / "tokens.json")
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    flows: tuple[Path, ...] = ()  # graph files or folders saved as flows at start-up
    public_hosts: tuple[str, ...] = ()
    queue_url: str | None = None
    settle_heap: bool = False


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
