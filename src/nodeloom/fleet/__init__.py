"""The worker fleet of a queue deployment: launches as jobs (`Job`, `execute`), the
Dramatiq queue on Redis (broker), what a server enqueues (submit), what a worker does
(worker, host, delivery), and run changes across processes (signals).
See docs/deployment.md."""

from nodeloom.fleet.jobs import Job, execute

__all__ = ["Job", "execute"]
