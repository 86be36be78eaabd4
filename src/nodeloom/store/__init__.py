"""The run store: flows and their versions, runs, events, checkpoints and blobs, in SQLite
(the default, a file in the data directory) or Postgres. See docs/store.md.

    from nodeloom.store import Store

    async with await Store.open() as store:
        run = await store.create_run(document=graph)
"""

from nodeloom.store.errors import (
    NotFoundError,
    RunStateError,
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreNewerSchemaError,
    StoreUnavailableError,
)
from nodeloom.store.records import (
    FlowSummary,
    FlowVersion,
    FlowVersionInfo,
    NodeExecution,
    PendingJobRecord,
    PruneReport,
    RunRecord,
    ScheduleRecord,
    StoredEvent,
    WakeRecord,
    WorkerRecord,
)
from nodeloom.store.repository import Store
from nodeloom.store.url import database_url

__all__ = [
    "FlowSummary",
    "FlowVersion",
    "FlowVersionInfo",
    "NodeExecution",
    "NotFoundError",
    "PendingJobRecord",
    "PruneReport",
    "RunRecord",
    "RunStateError",
    "ScheduleRecord",
    "Store",
    "StoreCorruptError",
    "StoreError",
    "StoreFullError",
    "StoreNewerSchemaError",
    "StoreUnavailableError",
    "StoredEvent",
    "WakeRecord",
    "WorkerRecord",
    "database_url",
]
