"""The parent side of the Code node: start `runner.py` in a fresh, limited process.

The child gets no part of the engine: a new interpreter in isolated mode (`-I`: no
PYTHON* variables, no user site, no script directory on sys.path), a minimal environment
(the engine's variables, where secrets live, are not passed), a new session (so the whole
process group can be killed) and an empty working directory that is removed afterwards.
Memory, CPU and core limits are applied by the runner itself before it reads any input.

The child's process group dies with the node: killed when the node ends, is cancelled or
times out (`_end`), and when this process dies, even by SIGKILL: the child gets the read
end of a lifeline pipe whose write end only this process holds, and the runner's watcher
kills the group when it reads end-of-file (runner.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

RUNNER = Path(__file__).with_name("runner.py")
LOG_LIMIT = 256 * 1024  # bytes of the user's output kept as logs
TAIL_LIMIT = 4 * 1024  # bytes of stderr kept to explain a crash
EXIT_GRACE = 2.0  # seconds for a killed child to be reaped and its result pipe read
OUTPUT_GRACE = 0.2  # seconds more for the output pipe, which something it started may hold


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the child ended. `document` is the runner's outcome (raw JSON bytes), if any."""

    timed_out: bool
    returncode: int | None
    document: bytes
    document_overflow: bool
    logs: str
    logs_truncated: int  # bytes of output not kept in `logs`
    stderr_tail: str


class _Buffer:
    """Keeps the first `limit` bytes of a stream and, optionally, the last `tail` bytes."""

    def __init__(self, limit: int, tail: int = 0) -> None:
        self.limit = limit
        self.tail_limit = tail
        self.head = bytearray()
        self.tail = b""
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        if self.tail_limit:
            self.tail = (self.tail + chunk)[-self.tail_limit :]

    @property
    def dropped(self) -> int:
        return self.total - len(self.head)


class _Child(asyncio.SubprocessProtocol):
    """Collects the child's stdout (the result channel) and stderr (the user's output)
    and tells when the child has exited, when its result pipe has closed, and when all
    its pipes have.

    They are separate on purpose: a process the code started inherits the output pipe
    and may keep it open after the child has exited; the result pipe is the child's own
    (the runner keeps it on a non-inheritable fd).
    """

    def __init__(self, result: _Buffer, output: _Buffer) -> None:
        loop = asyncio.get_running_loop()
        self.result = result
        self.output = output
        self.exited: asyncio.Future[None] = loop.create_future()
        self.result_closed: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        chunk = data.encode() if isinstance(data, str) else data
        (self.result if fd == 1 else self.output).add(chunk)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1 and not self.result_closed.done():
            self.result_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


# Passed on when set: what the interpreter needs to start (a shared libpython outside the
# default search path) and the time zone. Never credentials.
PASSED_VARIABLES = ("LD_LIBRARY_PATH", "TZ")


def child_environment(workdir: str) -> dict[str, str]:
    """The only variables the child sees: none of the engine's but PATH and those in
    PASSED_VARIABLES, where secrets do not live.

    Text encoding does not depend on them: the child runs with `-X utf8` (under `-I`,
    PYTHONIOENCODING would be ignored anyway).
    """
    environment = {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "HOME": workdir,
        "TMPDIR": workdir,  # removed afterwards, with whatever the code left there
    }
    for name in PASSED_VARIABLES:
        if name in os.environ:
            environment[name] = os.environ[name]
    return environment


async def run_code(payload: bytes, *, timeout: float, memory_limit_mb: int) -> Outcome:
    """Run the runner with `payload` on stdin; kill its process group after `timeout` s.

    Whatever happens, cancellation included, the process group is killed and the child
    reaped before this returns or raises.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    memory_bytes = min(memory_limit_mb * 1024 * 1024, 2**62)  # 2**62: no real limit
    cpu_seconds = math.ceil(timeout) + 1
    result = _Buffer(limit=memory_bytes + 1024 * 1024)
    output = _Buffer(limit=LOG_LIMIT, tail=TAIL_LIMIT)
    workdir = tempfile.mkdtemp(prefix="nodeloom-code-")
    # Both ends are close-on-exec: only the runner gets the read end (pass_fds), and no
    # other process ever gets the write end, so it closes exactly when this process ends.
    lifeline, lifeline_write = os.pipe()
    try:
        transport, child = await loop.subprocess_exec(
            lambda: _Child(result, output),
            sys.executable,
            "-I",
            "-X",
            "utf8",
            str(RUNNER),
            str(memory_bytes),
            str(cpu_seconds),
            str(lifeline),
            pass_fds=(lifeline,),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_environment(workdir),
            cwd=workdir,
            start_new_session=True,
        )
        os.close(lifeline)
        lifeline = -1
        try:
            stdin = transport.get_pipe_transport(0)
            if stdin is not None:
                # Buffered by the transport; if the child dies first, the rest is dropped.
                stdin.write(payload)
                stdin.close()
            await asyncio.wait([child.exited], timeout=max(0.0, deadline - loop.time()))
            timed_out = not child.exited.done()
        finally:
            await _end(transport, child)
        return Outcome(
            timed_out=timed_out,
            returncode=transport.get_returncode(),
            document=bytes(result.head),
            document_overflow=result.dropped > 0,
            logs=output.head.decode("utf-8", errors="replace"),
            logs_truncated=output.dropped,
            stderr_tail=output.tail.decode("utf-8", errors="replace"),
        )
    finally:
        for fd in (lifeline, lifeline_write):
            if fd >= 0:
                os.close(fd)
        shutil.rmtree(workdir, ignore_errors=True)


async def _end(transport: asyncio.SubprocessTransport, child: _Child) -> None:
    """Kill the child's whole process group (the child, if it still runs, and anything it
    left behind), wait until it is reaped and its pipes are read to their end, and close."""
    try:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(transport.get_pid(), signal.SIGKILL)
        if transport.get_returncode() is None:
            with contextlib.suppress(ProcessLookupError):
                transport.kill()  # in case it left its process group
        await asyncio.wait([child.exited, child.result_closed], timeout=EXIT_GRACE)
        # The output pipe may still be held by a process that left the session: its
        # last output is not worth more waiting.
        await asyncio.wait([child.closed], timeout=OUTPUT_GRACE)
    finally:
        transport.close()  # cancelled while waiting: the child is killed all the same
