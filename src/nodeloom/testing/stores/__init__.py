"""Real databases for tests: a throwaway Postgres cluster and fresh databases on it.

    with throwaway_postgres() as server:          # "postgresql://postgres@127.0.0.1:PORT"
        url = await create_database(server)
        ...
        await drop_database(url)

The pytest fixtures (`postgres_server`, `store_url`, `store`) are in
`nodeloom.testing.stores.pytest_plugin`.
"""

from nodeloom.testing.stores.postgres import create_database, drop_database, throwaway_postgres

__all__ = ["create_database", "drop_database", "throwaway_postgres"]
