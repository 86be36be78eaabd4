"""The Store's flows: save (a new version each time), read, list, delete."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Integer, Row, bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.store.access import Access, now
from nodeloom.store.errors import NotFoundError
from nodeloom.store.packing import dumps
from nodeloom.store.records import FlowSummary, FlowVersion, FlowVersionInfo
from nodeloom.store.schema import Document, Flow
from nodeloom.store.schema import FlowVersion as VersionRow

# A flow's version (its latest when `version` is NULL) and document, in one statement.
_VERSION = (
    select(
        Flow.name,
        Flow.deleted_at,
        VersionRow.version,
        VersionRow.created_at,
        Document.hash,
        Document.body,
    )
    .join(VersionRow, VersionRow.flow_id == Flow.id)
    .join(Document, Document.hash == VersionRow.document_hash)
    .where(
        Flow.id == bindparam("flow_id"),
        VersionRow.version
        == func.coalesce(bindparam("version", type_=Integer), Flow.latest_version),
    )
)


class Flows(Access):
    """Saved flows and their versions."""

    async def save_flow(
        self, name: str, document: Mapping[str, Any], flow_id: str | None = None
    ) -> FlowVersion:
        """Save a new version of a flow (a new flow when `flow_id` is None). Versions count
        from 1; the document is stored once however many versions or runs share it.
        Raises NotFoundError for an unknown or deleted `flow_id`."""
        body = dumps(dict(document))
        digest = hashlib.sha256(body.encode()).hexdigest()
        at = now()

        async def work(conn: AsyncConnection) -> tuple[str, int]:
            await self._store_document(conn, digest, body, at)
            if flow_id is None:
                new_id = uuid.uuid4().hex
                await conn.execute(
                    self._insert(Flow).values(
                        id=new_id, name=name, latest_version=1, created_at=at, updated_at=at
                    )
                )
                target, version = new_id, 1
            else:
                version = await conn.scalar(
                    update(Flow)
                    .where(Flow.id == flow_id, Flow.deleted_at.is_(None))
                    .values(latest_version=Flow.latest_version + 1, name=name, updated_at=at)
                    .returning(Flow.latest_version)
                )
                if version is None:
                    raise NotFoundError(f"no flow with id {flow_id!r} (or it was deleted)")
                target = flow_id
            await conn.execute(
                self._insert(VersionRow).values(
                    flow_id=target, version=version, document_hash=digest, created_at=at
                )
            )
            return target, version

        target, version = await self._db.write(work)
        return FlowVersion(target, name, version, dict(document), digest, at)

    async def get_flow(
        self, flow_id: str, version: int | None = None, *, include_deleted: bool = False
    ) -> FlowVersion:
        """A version of a flow with its document (the latest when `version` is None)."""

        async def work(conn: AsyncConnection) -> FlowVersion:
            found = (await conn.execute(_VERSION, {"flow_id": flow_id, "version": version})).first()
            if found is not None and (found.deleted_at is None or include_deleted):
                return FlowVersion(
                    flow_id,
                    found.name,
                    found.version,
                    self._load(found.body),
                    found.hash,
                    found.created_at,
                )
            # Not found, or deleted: the two reads below say which, in their errors.
            flow = await self._flow(conn, flow_id, include_deleted)
            wanted = flow.latest_version if version is None else version
            row = (
                await conn.execute(
                    select(VersionRow.created_at, Document.hash, Document.body)
                    .join(Document, Document.hash == VersionRow.document_hash)
                    .where(VersionRow.flow_id == flow_id, VersionRow.version == wanted)
                )
            ).first()
            if row is None:
                raise NotFoundError(
                    f"flow {flow_id!r} has no version {wanted} "
                    f"(versions 1 to {flow.latest_version})"
                )
            return FlowVersion(
                flow_id, flow.name, wanted, self._load(row.body), row.hash, row.created_at
            )

        return await self._db.read(work)

    async def list_flows(self, *, include_deleted: bool = False) -> list[FlowSummary]:
        """Every flow, the most recently saved first."""
        query = select(Flow).order_by(Flow.updated_at.desc(), Flow.id)
        if not include_deleted:
            query = query.where(Flow.deleted_at.is_(None))

        async def work(conn: AsyncConnection) -> list[FlowSummary]:
            return [_flow_summary(row) for row in (await conn.execute(query)).all()]

        return await self._db.read(work)

    async def list_versions(
        self, flow_id: str, *, include_deleted: bool = False
    ) -> list[FlowVersionInfo]:
        """Every version of a flow, oldest first (without documents)."""

        async def work(conn: AsyncConnection) -> list[FlowVersionInfo]:
            await self._flow(conn, flow_id, include_deleted)
            rows = await conn.execute(
                select(
                    VersionRow.flow_id,
                    VersionRow.version,
                    VersionRow.document_hash,
                    Document.size,
                    VersionRow.created_at,
                )
                .join(Document, Document.hash == VersionRow.document_hash)
                .where(VersionRow.flow_id == flow_id)
                .order_by(VersionRow.version)
            )
            return [FlowVersionInfo(*row) for row in rows.all()]

        return await self._db.read(work)

    async def delete_flow(self, flow_id: str) -> None:
        """Mark a flow deleted: it leaves `list_flows` and `get_flow`, but its versions
        stay, so runs of it still show the graph that ran. Raises NotFoundError."""

        async def work(conn: AsyncConnection) -> None:
            result = await conn.execute(
                update(Flow)
                .where(Flow.id == flow_id, Flow.deleted_at.is_(None))
                .values(deleted_at=now())
            )
            if result.rowcount == 0:
                raise NotFoundError(f"no flow with id {flow_id!r} (or it was already deleted)")

        await self._db.write(work)


def _flow_summary(flow: Row[Any]) -> FlowSummary:
    return FlowSummary(
        flow.id, flow.name, flow.latest_version, flow.created_at, flow.updated_at, flow.deleted_at
    )
