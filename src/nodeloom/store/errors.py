"""The run store's errors, each with a stable code (documented in docs/store.md).

    NodeloomError
    └── StoreError                   store_error         base; never raised itself
        ├── StoreCorruptError        store_corrupt       the file is not a usable nodeloom
        │                                                database (random bytes, a damaged
        │                                                page, another application's schema)
        ├── StoreNewerSchemaError    store_newer_schema  written by a newer nodeloom
        ├── StoreFullError           store_full          the disk (or the configured size
        │                                                cap) is full; nothing was half-written
        ├── StoreUnavailableError    store_unavailable   the database cannot be reached or
        │                                                stays locked; the URL is unsupported
        ├── NotFoundError            not_found           no flow, run or blob with that id
        └── RunStateError            run_state           the run is not in a state that
                                                         allows this (resume a completed
                                                         run, cancel a failed one)

Every message names the database (the SQLite file, or the URL without its password) and
says what to do. The store never modifies a database it refuses to open.
"""

from __future__ import annotations

from nodeloom.errors import NodeloomError


class StoreError(NodeloomError):
    """Base of the store's errors."""

    code = "store_error"


class StoreCorruptError(StoreError):
    code = "store_corrupt"


class StoreNewerSchemaError(StoreError):
    code = "store_newer_schema"


class StoreFullError(StoreError):
    code = "store_full"
    retryable = True


class StoreUnavailableError(StoreError):
    code = "store_unavailable"
    retryable = True


class NotFoundError(StoreError):
    code = "not_found"


class RunStateError(StoreError):
    """The run exists but its status does not allow the change: `run_id`, its `status`
    and the `required` states are attributes, and the message names them."""

    code = "run_state"

    def __init__(self, run_id: str, status: str, required: tuple[str, ...], action: str) -> None:
        self.run_id = run_id
        self.status = status
        self.required = required
        super().__init__(f"run {run_id} is {status}; only {_either(required)} runs can be {action}")


def _either(states: tuple[str, ...]) -> str:
    """('paused', 'interrupted', 'failed') -> 'paused, interrupted or failed'."""
    if len(states) <= 1:
        return "".join(states)
    return f"{', '.join(states[:-1])} or {states[-1]}"
