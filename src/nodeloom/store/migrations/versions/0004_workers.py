"""The worker registry: one row per server or worker process, upserted every few seconds
with its load (runs in flight, concurrency) and a JSON snapshot of its run metrics, for
`GET /api/health`, `GET /metrics` and `nodeloom workers`. Additive: a new table.

Revision ID: 0004_workers
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None

# Frozen here: a migration never imports the models, which move on.
Time = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "workers",
        sa.Column("id", sa.String(200), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("started_at", Time, nullable=False),
        sa.Column("last_seen", Time, nullable=False),
        sa.Column("stopped_at", Time, nullable=True),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("in_flight", sa.Integer(), nullable=False),
        sa.Column("metrics", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workers")),
    )
    op.create_index(op.f("ix_workers_last_seen"), "workers", ["last_seen"])


def downgrade() -> None:
    op.drop_index(op.f("ix_workers_last_seen"), table_name="workers")
    op.drop_table("workers")
