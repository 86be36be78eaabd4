"""The Store's creation of runs: `create_run` writes a run at once; `prepare_run` builds
the same rows without writing them (a `NewRun`), for the run's first write to carry
(`write_created`, `end_run(created=...)`): a short run is then created, recorded and
ended in one transaction (docs/store.md, "A run created with its first write")."""

from __future__ import annotations

import hashlib
import os
import socket
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from nodeloom.plugins.contract import Event
from nodeloom.store.access import Step, check_choice, now
from nodeloom.store.committer import Phase, Write
from nodeloom.store.errors import NotFoundError
from nodeloom.store.packing import UNIT, dumps
from nodeloom.store.recording import Recording
from nodeloom.store.records import RUN_STATES, RunRecord
from nodeloom.store.schema import Document, Run
from nodeloom.store.schema import FlowVersion as VersionRow

_HOST = socket.gethostname()
VERSIONS_REMEMBERED = 4_096  # saved versions whose document hash a store keeps in memory


@dataclass(eq=False, slots=True)
class NewRun:
    """A run `Store.prepare_run` built and did not write: its record (what `get_run`
    will read once it is written) and the rows that create it. Written by the first
    write that carries it, or alone by `create_run`; until then the run does not exist."""

    record: RunRecord
    row: dict[str, Any]  # the runs row inserted (its last_seq follows the first events)
    steps: list[Step]  # the runs row, and the blobs its trigger and settings reference
    document: list[Step]  # the document's row: sent unless this store wrote it before
    digest: str | None
    explain: Callable[[BaseException], BaseException]

    @property
    def run_id(self) -> str:
        return self.record.id


def _utc(value: datetime | None) -> datetime | None:
    """A time as the store reads it back: timezone-aware UTC (naive means UTC)."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Creation(Recording):
    """Runs created: at once, or with their first write."""

    async def create_run(
        self,
        *,
        run_id: str | None = None,
        flow_id: str | None = None,
        flow_version: int | None = None,
        document: Mapping[str, Any] | None = None,
        status: str = "running",
        trigger: Any = None,
        chat_id: str | None = None,
        settings: Mapping[str, Any] | None = None,
        started_at: datetime | None = None,
        owner_pid: int | None = None,
        owner_host: str | None = None,
        rerun_of: str | None = None,
        rerun_from: str | None = None,
        parent_run_id: str | None = None,
        parent_node: str | None = None,
    ) -> RunRecord:
        """Record a new run, owned by this process (pid, host, heartbeat now).

        A run of a saved flow names `flow_id` (and `flow_version`, default the latest):
        its document is that version's. A run of a file passes its `document`. Either
        way the document is stored once, by content hash. A run that runs another one
        again names it in `rerun_of` (not checked: the other run may since be pruned) and
        the node it starts from in `rerun_from`. A child run (a sub-flow, a flow tool's
        call, an error flow) names the run and node that started it in `parent_run_id`
        and `parent_node`. Raises ValueError for a run id already taken, NotFoundError
        for an unknown flow or version.
        """
        new = await self.prepare_run(
            run_id=run_id,
            flow_id=flow_id,
            flow_version=flow_version,
            document=document,
            status=status,
            trigger=trigger,
            chat_id=chat_id,
            settings=settings,
            started_at=started_at,
            owner_pid=owner_pid,
            owner_host=owner_host,
            rerun_of=rerun_of,
            rerun_from=rerun_from,
            parent_run_id=parent_run_id,
            parent_node=parent_node,
        )
        await self._create(new, None)
        return new.record

    async def prepare_run(
        self,
        *,
        run_id: str | None = None,
        flow_id: str | None = None,
        flow_version: int | None = None,
        document: Mapping[str, Any] | None = None,
        status: str = "running",
        trigger: Any = None,
        chat_id: str | None = None,
        settings: Mapping[str, Any] | None = None,
        started_at: datetime | None = None,
        owner_pid: int | None = None,
        owner_host: str | None = None,
        rerun_of: str | None = None,
        rerun_from: str | None = None,
        parent_run_id: str | None = None,
        parent_node: str | None = None,
    ) -> NewRun:
        """`create_run`'s run, checked and packed but not written: hand it to the run's
        first write (`write_created`, `end_run(created=...)`). An unknown flow or version
        raises NotFoundError here; a run id already taken raises ValueError from that
        write (nothing of it is written)."""
        check_choice(status, RUN_STATES, "status")
        run_id = run_id or uuid.uuid4().hex
        at = now()
        body = dumps(dict(document)) if document is not None else None
        digest = hashlib.sha256(body.encode()).hexdigest() if body is not None else None
        packed = {
            "trigger": await self._pack(trigger, UNIT),
            "settings": await self._pack(settings, UNIT),
        }
        version, document_hash = flow_version, digest
        if flow_id is not None:  # flows and their versions are never deleted: read first
            version, known = await self._flow_version(flow_id, flow_version)
            document_hash = document_hash or known
        document_steps: list[Step] = []
        if body is not None and digest is not None:
            size = len(body.encode())
            document_row = {"hash": digest, "body": body, "size": size, "created_at": at}
            document_steps.append((Phase.DOCUMENT, self._insert_ignore(Document), [document_row]))
        run_row = {
            "id": run_id,
            "flow_id": flow_id,
            "flow_version": version,
            "document_hash": document_hash,
            "status": status,
            "chat_id": chat_id,
            "created_at": at,
            "started_at": _utc(started_at) or (at if status == "running" else None),
            "steps": 0,
            "owner_pid": owner_pid if owner_pid is not None else os.getpid(),
            "owner_host": owner_host or _HOST,
            "heartbeat_at": at,
            "rerun_of": rerun_of,
            "rerun_from": rerun_from,
            "parent_run_id": parent_run_id,
            "parent_node": parent_node,
        }
        inserted = {
            **run_row,
            "trigger": packed["trigger"].text,
            "settings": packed["settings"].text,
        }
        steps: list[Step] = [(Phase.RUN_INSERT, self._plain_insert(Run), [inserted])]
        steps += self._links(run_id, packed.values())

        def explain(exc: BaseException) -> BaseException:
            if isinstance(exc, IntegrityError) and "foreign key" not in str(exc).lower():
                return ValueError(f"a run with id {run_id!r} already exists")
            return exc

        # The record of what will be written, as get_run would read it (no read back).
        record = RunRecord(
            **run_row,
            finished_at=None,
            duration_ms=None,
            usage=None,
            error=None,
            trigger=await self._unpack(packed["trigger"].text, UNIT, True),
            settings=await self._unpack(packed["settings"].text, UNIT, True),
        )
        return NewRun(record, inserted, steps, document_steps, digest, explain)

    async def write_created(
        self,
        new: NewRun,
        *,
        events: Iterable[Event | Mapping[str, Any]] = (),
        nodes: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        """Write a prepared run with its first events and checkpoint changes (as
        `write_batch` takes them), in one transaction. Raises ValueError if its id is
        taken (nothing is written), or for an invalid event or change."""
        await self._create(new, await self._record(new.run_id, events, nodes, None))

    async def _create(self, new: NewRun, then: Write | None) -> Write:
        """Commit `new`'s rows, followed by `then`'s steps (one write, one transaction),
        and wait until it is committed."""
        run_id = new.run_id
        if then is not None and then.events:
            new.row["last_seq"] = max(row["seq"] for row in then.events)

        def write(with_document: bool) -> Write:
            steps = [*(new.document if with_document else []), *new.steps]
            if then is None:
                return Write(run_id, steps, explain=new.explain)
            return Write(
                run_id,
                steps + then.steps,
                must_exist=then.must_exist,
                returns_run=then.returns_run,
                explain=new.explain,
                events=then.events,
            )

        # A document this store wrote before is not sent again (a run of a flow is
        # usually one of many). Prune may have deleted it since: the foreign key says so,
        # and the run is written again with it.
        known = new.digest in self._documents
        try:
            done = await self._commit(write(not known), run_id)
        except IntegrityError:
            if not known:
                raise
            self._documents.discard(new.digest)  # type: ignore[arg-type]
            done = await self._commit(write(True), run_id)
        if new.digest is not None:
            self._documents.add(new.digest)
        return done

    async def _flow_version(self, flow_id: str, version: int | None) -> tuple[int, str]:
        """(the version, its document hash) of a saved flow (default: its latest). A
        version named once is not read again: versions never change, nor are deleted."""
        if version is not None:
            known = self._version_hashes.get((flow_id, version))
            if known is not None:
                return version, known
            number, known = await self._read_flow_version(flow_id, version)
            if len(self._version_hashes) >= VERSIONS_REMEMBERED:
                self._version_hashes.clear()
            self._version_hashes[(flow_id, number)] = known
            return number, known
        return await self._read_flow_version(flow_id, None)

    async def _read_flow_version(self, flow_id: str, version: int | None) -> tuple[int, str]:
        async def work(conn: AsyncConnection) -> tuple[int, str]:
            flow = await self._flow(conn, flow_id, True)
            number = flow.latest_version if version is None else version
            known = await conn.scalar(
                select(VersionRow.document_hash).where(
                    VersionRow.flow_id == flow_id, VersionRow.version == number
                )
            )
            if known is None:
                raise NotFoundError(f"flow {flow_id!r} has no version {number}")
            return number, known

        return await self._db.read(work)
