from collections.abc import Iterator

import pytest

from nodeloom.testing.stores.mariadb import MariaDBUnavailable, throwaway_mariadb


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[str]:
    """A throwaway MariaDB server for the session; its base URL. Fails, never skips."""
    try:
        with throwaway_mariadb() as server:
            yield server
    except MariaDBUnavailable as exc:
        pytest.fail(str(exc))
