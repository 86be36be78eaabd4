"""Start an MCP stdio server that dies with nodeloom:
`python -I launcher.py PARENT_PID PROGRAM ARG...`.

The mcp client starts this script in place of the server, in a new session (so the
launcher leads the process group), with the server's pipes and environment. The launcher
forks, the child execs PROGRAM with those pipes, and the launcher stays as a small
supervisor whose only job is to notice that nodeloom (PARENT_PID) has died, even by
SIGKILL, and then to kill the whole process group: the server and anything it started
(`npx` and its `node`, a `uv run` and its Python...).

It notices at once on Linux (`prctl(PR_SET_PDEATHSIG)`, delivered when the thread that
started it ends: the handler checks that the parent really changed), and everywhere
within POLL_SECONDS by polling `getppid()`, which also closes the race of a parent that
died before prctl. It holds none of the server's pipes: the server's exit is seen by the
client as before, and the launcher exits with the server's status. The client's own
shutdown (close stdin, SIGTERM then SIGKILL to the group) reaches the server directly;
SIGTERM, SIGINT and SIGHUP sent to the launcher alone are passed on to the server.

Never imported by the engine; it imports only the standard library.
"""

import os
import select
import signal
import sys

POLL_SECONDS = 0.1
PR_SET_PDEATHSIG = 1
DEATH_SIGNAL = signal.SIGUSR1


def _ask_for_death_signal() -> None:
    """Linux: have DEATH_SIGNAL sent when the parent ends. Elsewhere, polling alone."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(DEATH_SIGNAL), 0, 0, 0)
    except (OSError, AttributeError):  # no libc prctl: the polling still works
        pass


def main() -> None:
    parent = int(sys.argv[1])
    argv = sys.argv[2:]

    def check_parent(*_: object) -> None:
        if os.getppid() != parent:  # reparented: nodeloom is gone
            os.killpg(0, signal.SIGKILL)  # the launcher included

    if os.getpgrp() != os.getpid():  # started without a new session: lead a group anyway
        os.setpgid(0, 0)
    wake_read, wake_write = os.pipe()  # both close-on-exec: the server gets neither
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(DEATH_SIGNAL, check_parent)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the loop when the server ends
    _ask_for_death_signal()
    check_parent()

    pid = os.fork()
    if pid == 0:
        for signum in (DEATH_SIGNAL, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        try:
            os.execv(argv[0], argv)
        except OSError as exc:
            os.write(2, f"nodeloom: cannot start {argv[0]}: {exc}\n".encode())
            os._exit(127)

    def forward(signum: int, _frame: object) -> None:  # a stop meant for the server
        try:  # noqa: SIM105 - contextlib would be one more import
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # the server's stdin and stdout are the server's alone
    os.dup2(null, 1)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        check_parent()
        select.select([wake_read], [], [], POLL_SECONDS)
        try:  # noqa: SIM105 - drain the wake-ups
            os.read(wake_read, 512)
        except BlockingIOError:
            pass
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: end the same way
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main()
