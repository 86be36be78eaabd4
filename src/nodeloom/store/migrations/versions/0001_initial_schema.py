"""The initial schema: documents, flows, runs, events, node executions, blobs.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

# Frozen here: a migration never imports the models, which move on.
Time = sa.DateTime(timezone=True)


def upgrade() -> None:
    meta = op.create_table(
        "store_meta",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_store_meta")),
    )
    op.bulk_insert(meta, [{"key": "store_id", "value": uuid.uuid4().hex}])
    op.create_table(
        "documents",
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("created_at", Time, nullable=False),
        sa.PrimaryKeyConstraint("hash", name=op.f("pk_documents")),
    )
    op.create_table(
        "blobs",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("mime", sa.String(), nullable=False),
        sa.Column("created_at", Time, nullable=False),
        sa.PrimaryKeyConstraint("sha256", name=op.f("pk_blobs")),
    )
    op.create_table(
        "flows",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("latest_version", sa.Integer(), nullable=False),
        sa.Column("created_at", Time, nullable=False),
        sa.Column("updated_at", Time, nullable=False),
        sa.Column("deleted_at", Time, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_flows")),
    )
    op.create_table(
        "flow_versions",
        sa.Column("flow_id", sa.String(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("document_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", Time, nullable=False),
        sa.ForeignKeyConstraint(
            ["document_hash"],
            ["documents.hash"],
            name=op.f("fk_flow_versions_document_hash_documents"),
        ),
        sa.ForeignKeyConstraint(
            ["flow_id"], ["flows.id"], name=op.f("fk_flow_versions_flow_id_flows")
        ),
        sa.PrimaryKeyConstraint("flow_id", "version", name=op.f("pk_flow_versions")),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("flow_id", sa.String(), nullable=True),
        sa.Column("flow_version", sa.Integer(), nullable=True),
        sa.Column("document_hash", sa.String(length=64), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("trigger", sa.Text(), nullable=True),
        sa.Column("chat_id", sa.String(), nullable=True),
        sa.Column("created_at", Time, nullable=False),
        sa.Column("started_at", Time, nullable=True),
        sa.Column("finished_at", Time, nullable=True),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.Column("usage", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("steps", sa.Integer(), nullable=False),
        sa.Column("settings", sa.Text(), nullable=True),
        sa.Column("owner_pid", sa.Integer(), nullable=True),
        sa.Column("owner_host", sa.String(), nullable=True),
        sa.Column("heartbeat_at", Time, nullable=True),
        sa.ForeignKeyConstraint(
            ["document_hash"], ["documents.hash"], name=op.f("fk_runs_document_hash_documents")
        ),
        sa.ForeignKeyConstraint(["flow_id"], ["flows.id"], name=op.f("fk_runs_flow_id_flows")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    for columns in (
        ["created_at"],
        ["status", "heartbeat_at"],
        ["flow_id", "created_at"],
        ["chat_id", "created_at"],
        ["document_hash"],
    ):
        op.create_index(op.f(f"ix_runs_{'_'.join(columns)}"), "runs", columns)
    op.create_table(
        "blob_refs",
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_blob_refs_run_id_runs"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["sha256"], ["blobs.sha256"], name=op.f("fk_blob_refs_sha256_blobs")
        ),
        sa.PrimaryKeyConstraint("run_id", "sha256", name=op.f("pk_blob_refs")),
    )
    op.create_index(op.f("ix_blob_refs_sha256"), "blob_refs", ["sha256"])
    op.create_table(
        "events",
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("node_id", sa.String(), nullable=True),
        sa.Column("node_name", sa.String(), nullable=True),
        sa.Column("node_type", sa.String(), nullable=True),
        sa.Column("data", sa.Text(), nullable=True),
        sa.Column("timestamp", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_events_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "seq", name=op.f("pk_events")),
    )
    op.create_table(
        "node_executions",
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("node_id", sa.String(), nullable=False),
        sa.Column("execution", sa.Integer(), nullable=False),
        sa.Column("node_name", sa.String(), nullable=True),
        sa.Column("node_type", sa.String(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("inputs", sa.Text(), nullable=True),
        sa.Column("outputs", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("usage", sa.Text(), nullable=True),
        sa.Column("started_at", Time, nullable=False),
        sa.Column("finished_at", Time, nullable=True),
        sa.Column("side_effects", sa.String(length=16), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
            name=op.f("fk_node_executions_run_id_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "node_id", "execution", name=op.f("pk_node_executions")),
    )


def downgrade() -> None:
    for table in (
        "node_executions",
        "events",
        "blob_refs",
        "runs",
        "flow_versions",
        "flows",
        "blobs",
        "documents",
        "store_meta",
    ):
        op.drop_table(table)
