"""What the engine's checkpoint writer and crash recovery need: a checkpoint's input hash
and state delta; a run's re-run origin, cancel request and highest stored event seq.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None

# Frozen here: a migration never imports the models, which move on.
Time = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("runs", sa.Column("rerun_of", sa.String(), nullable=True))
    op.add_column("runs", sa.Column("rerun_from", sa.String(), nullable=True))
    op.add_column("runs", sa.Column("cancel_requested_at", Time, nullable=True))
    op.add_column(
        "runs", sa.Column("last_seq", sa.Integer(), nullable=False, server_default=sa.text("0"))
    )
    op.add_column("node_executions", sa.Column("input_hash", sa.String(length=64), nullable=True))
    op.add_column("node_executions", sa.Column("state_delta", sa.Text(), nullable=True))
    # Runs recorded before this revision: their highest stored seq, from their events.
    op.execute(
        "UPDATE runs SET last_seq = COALESCE("
        "(SELECT MAX(seq) FROM events WHERE events.run_id = runs.id), 0)"
    )


def downgrade() -> None:
    with op.batch_alter_table("node_executions") as batch:
        batch.drop_column("state_delta")
        batch.drop_column("input_hash")
    with op.batch_alter_table("runs") as batch:
        for column in ("last_seq", "cancel_requested_at", "rerun_from", "rerun_of"):
            batch.drop_column(column)
