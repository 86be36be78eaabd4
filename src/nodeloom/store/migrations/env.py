"""Alembic's environment for the store. Run programmatically by `nodeloom.store.migrator`
(no alembic.ini): the caller passes an open connection in `config.attributes`, inside
a transaction that already holds the database's write lock.

To write a new revision while developing (from the repository root)::

    .venv/bin/python -m nodeloom.store.migrator revision "add a column"
"""

from __future__ import annotations

from alembic import context

from nodeloom.store.schema import VERSION_TABLE, Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=VERSION_TABLE,
    render_as_batch=True,  # SQLite: ALTER via copy-and-move
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
