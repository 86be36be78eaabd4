"""Timers: the schedules of saved flows' Schedule Triggers, and the deadlines of paused
runs (a Wait's wake time, a person's timeout), each fired once by a lease in the store.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None

# Frozen here: a migration never imports the models, which move on.
Time = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("flow_id", sa.String(), nullable=False),
        sa.Column("node_id", sa.String(), nullable=False),
        sa.Column("flow_version", sa.Integer(), nullable=False),
        sa.Column("spec", sa.Text(), nullable=False),
        sa.Column("next_fire_at", Time, nullable=True),
        sa.Column("last_fired_at", Time, nullable=True),
        sa.Column("paused", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("updated_at", Time, nullable=False),
        sa.ForeignKeyConstraint(["flow_id"], ["flows.id"], name="fk_schedules_flow_id_flows"),
        sa.PrimaryKeyConstraint("id", name="pk_schedules"),
    )
    op.create_index("ix_schedules_flow_id", "schedules", ["flow_id"])
    op.create_index("ix_schedules_next_fire_at", "schedules", ["next_fire_at"])
    op.create_table(
        "wakes",
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("node_id", sa.String(), nullable=False),
        sa.Column("wake_at", Time, nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("leased_until", Time, nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_wakes_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "node_id", name="pk_wakes"),
    )
    op.create_index("ix_wakes_wake_at", "wakes", ["wake_at"])


def downgrade() -> None:
    op.drop_index("ix_wakes_wake_at", table_name="wakes")
    op.drop_table("wakes")
    op.drop_index("ix_schedules_next_fire_at", table_name="schedules")
    op.drop_index("ix_schedules_flow_id", table_name="schedules")
    op.drop_table("schedules")
