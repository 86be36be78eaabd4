"""Where a node execution stands in its run, and the parameters it ran with: resume
matches a recorded execution by its position (node id + `activation`), not by a hash of
what it received, and keeps the rendered (redacted) parameters to report what differs.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("node_executions", sa.Column("activation", sa.Text(), nullable=True))
    op.add_column("node_executions", sa.Column("parameters", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("node_executions") as batch:
        batch.drop_column("parameters")
        batch.drop_column("activation")
