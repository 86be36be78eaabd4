"""The group-commit write of what a run did: its events, checkpoint changes and run
fields, checked and packed, as one `Write` (shared by `write_batch` and `finish_run`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from nodeloom.plugins.contract import Event
from nodeloom.store.access import RUN_JSON, Access, now
from nodeloom.store.committer import Phase, Write
from nodeloom.store.rows import EVENT_JSON, NODE_JSON, checkpoint_row, event_row, merge_changes
from nodeloom.store.schema import Event as EventRow
from nodeloom.store.schema import NodeExecution as NodeRow


class Recording(Access):
    """Builds the write of a run's events and checkpoints."""

    async def _record(
        self,
        run_id: str,
        events: Iterable[Event | Mapping[str, Any]],
        nodes: Iterable[Mapping[str, Any]],
        run: dict[str, Any] | None,
    ) -> Write | None:
        """The write of events, checkpoints and run fields. `run`: the runs row's changes
        (its `last_seq` follows the events), or None to leave the row alone. Everything
        is checked and packed here, before the transaction; None if there is nothing to
        write."""
        event_rows = [event_row(run_id, item) for item in events]
        node_rows = merge_changes(nodes)
        if not (event_rows or node_rows or run):
            return None
        at = now()
        shapes: dict[frozenset[str], list[dict[str, Any]]] = {}
        for row in node_rows:
            shapes.setdefault(checkpoint_row(run_id, row, at), []).append(row)
        packed = await self._pack_columns(
            itertools.chain(
                ((row, EVENT_JSON) for row in event_rows),
                ((row, NODE_JSON) for row in node_rows),
                [] if run is None else [(run, RUN_JSON)],
            )
        )
        steps = self._links(run_id, packed)
        if run is not None:
            top = max((row["seq"] for row in event_rows), default=None)
            if top is not None and "last_seq" in run:
                run["last_seq"], top = max(run["last_seq"], top), None
            params = {f"new_{column}": value for column, value in run.items()}
            params["run_key"] = run_id
            if top is not None:
                params["top_seq"] = top
            steps.append(
                (Phase.RUN_UPDATE, self._run_update(frozenset(run), top is not None), [params])
            )
        if event_rows:
            steps.append((Phase.EVENT, self._append_events(), event_rows))
        steps.extend((Phase.NODE, self._upsert(changed), rows) for changed, rows in shapes.items())
        return Write(run_id, steps, must_exist=run is not None, events=event_rows)

    def _append_events(self) -> Any:
        statement = self._statements.get("append_events")
        if statement is None:
            statement = self._insert(EventRow).on_conflict_do_nothing()
            self._statements["append_events"] = statement
        return statement

    def _upsert(self, changed: frozenset[str]) -> Any:
        """The checkpoint upsert that updates `changed` (built once per shape)."""
        key = ("node_upsert", changed)
        statement = self._statements.get(key)
        if statement is None:
            insert = self._insert(NodeRow)
            statement = insert.on_conflict_do_update(
                index_elements=["run_id", "node_id", "execution"],
                set_={column: insert.excluded[column] for column in sorted(changed)},
            )
            self._statements[key] = statement
        return statement
