"""The outbox of a queue deployment: each resume or re-run job is recorded before it is
enqueued and deleted by the worker that takes it, so that a job Redis lost is enqueued
again by a worker's sweep. Additive: a new table.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None

# Frozen here: a migration never imports the models, which move on.
Time = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "pending_jobs",
        sa.Column("job_id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", Time, nullable=False),
        sa.PrimaryKeyConstraint("job_id", name=op.f("pk_pending_jobs")),
    )
    op.create_index(op.f("ix_pending_jobs_created_at"), "pending_jobs", ["created_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_pending_jobs_created_at"), table_name="pending_jobs")
    op.drop_table("pending_jobs")
