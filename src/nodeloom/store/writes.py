"""A group-commit write: one store call's statements about one run, each with its rows,
tagged with the phase of the batch's transaction it goes in (`nodeloom.store.committer`),
and the predicates the committer reads a write by."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from sqlalchemy import Row


class Phase(IntEnum):
    """Where a statement goes in a batch's transaction (inserts before what refers to
    them)."""

    DOCUMENT = 0
    RUN_INSERT = 1
    BLOB = 2
    BLOB_REF = 3
    RUN_UPDATE = 4
    EVENT = 5
    NODE = 6
    RUN_FINISH = 7


@dataclass(eq=False, slots=True)
class Write:
    """One store call's statements, each `(phase, statement, rows)` (rows: executemany
    parameter dicts of one shape per statement). `must_exist`: fail with the run missing
    (`missing`) if `run_id` is not a run when the batch ends. `returns_run`: read the run's
    row back in the transaction (`row`). `explain` turns a driver error of this write,
    executed alone, into the store's error. `events`: the event rows it writes (for the
    `on_commit` listeners)."""

    run_id: str | None
    steps: list[tuple[Phase, Any, list[dict[str, Any]]]]
    must_exist: bool = False
    returns_run: bool = False
    missing: Callable[[], BaseException] | None = None
    explain: Callable[[BaseException], BaseException] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    row: Row[Any] | None = None
    future: asyncio.Future[None] | None = None


class Missing(Exception):
    """Runs that writes of a batch needed were not there when it ended."""

    def __init__(self, ids: set[str]) -> None:
        super().__init__(", ".join(sorted(ids)))
        self.ids = ids


_REFERRING = (Phase.EVENT, Phase.NODE, Phase.BLOB_REF)
_ON_RUNS = (Phase.RUN_INSERT, Phase.RUN_UPDATE, Phase.RUN_FINISH)


def refers(write: Write) -> bool:
    """A row that refers to the run (an event, a checkpoint) proves it exists: its
    foreign key fails otherwise."""
    return any(phase in _REFERRING for phase, _, _ in write.steps)


def checked(batch: Sequence[Write]) -> set[str]:
    """The runs a batch must find when it ends: those of writes that need their run and
    write no row that would prove it (`refers`)."""
    return {w.run_id for w in batch if w.must_exist and w.run_id is not None and not refers(w)}


def fits_one_statement(write: Write) -> bool:
    """Whether a write can go in a batch's one statement: it has a run, does not read it
    back, changes its runs row once at most (the parts of one statement see one snapshot)
    and, if its run must exist, inserts, updates or refers to it."""
    if write.run_id is None or write.returns_run:
        return False
    on_runs = sum(1 for phase, _, _ in write.steps if phase in _ON_RUNS)
    return on_runs == 1 or (on_runs == 0 and (not write.must_exist or refers(write)))


def merge(batch: Sequence[Write]) -> list[tuple[Any, list[dict[str, Any]]]]:
    """The batch's statements, each with the rows of all its writes, in phase order."""
    merged: dict[tuple[Phase, int], tuple[Any, list[dict[str, Any]]]] = {}
    for write in batch:
        for phase, statement, rows in write.steps:
            key = (phase, id(statement))
            found = merged.get(key)
            if found is None:
                merged[key] = (statement, list(rows))
            else:
                found[1].extend(rows)
    return [merged[key] for key in sorted(merged, key=lambda key: key[0])]
