"""Child runs: a run started by another run's node (Execute Flow, a Flow Tool's call, an
error flow) names that run and node; a run's children are found by `parent_run_id`.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("parent_run_id", sa.String(), nullable=True))
    op.add_column("runs", sa.Column("parent_node", sa.String(), nullable=True))
    op.create_index(op.f("ix_runs_parent_run_id"), "runs", ["parent_run_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_runs_parent_run_id"), table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("parent_node")
        batch.drop_column("parent_run_id")
