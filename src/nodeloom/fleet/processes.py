"""`nodeloom worker`'s supervisor: N worker processes (nodeloom.fleet.worker), each
started again if it dies (a SIGKILL, an out-of-memory kill); SIGTERM and SIGINT are
passed on to them and it returns once they have all stopped. A worker process dies with
its supervisor (Linux: PR_SET_PDEATHSIG)."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time

RESTART_DELAY_SECONDS = 1.0


def supervise(processes: int, concurrency: int, grace: float, env: dict[str, str]) -> int:
    command = [
        sys.executable,
        "-m",
        "nodeloom.fleet.worker",
        "--concurrency",
        str(concurrency),
        "--grace",
        str(grace),
    ]
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)

    def spawn() -> subprocess.Popen[bytes]:
        return subprocess.Popen(command, env=env, preexec_fn=_die_with_parent)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    children = [spawn() for _ in range(processes)]
    print(
        f"nodeloom worker: {processes} process(es) {[c.pid for c in children]}, "
        f"{concurrency} run(s) at once each",
        file=sys.stderr,
        flush=True,
    )
    while True:
        time.sleep(0.2)
        for index, child in enumerate(children):
            code = child.poll()
            if code is None or stopping:
                continue
            if code == 2:  # misconfigured (its message says why): starting again won't help
                stop()
                return 2
            print(
                f"nodeloom worker: process {child.pid} exited ({code}); starting another",
                file=sys.stderr,
                flush=True,
            )
            time.sleep(RESTART_DELAY_SECONDS)
            children[index] = spawn()
        if stopping and all(child.poll() is not None for child in children):
            return 0


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the supervisor dies (Linux only)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent died before prctl
            os.kill(os.getpid(), signal.SIGTERM)
