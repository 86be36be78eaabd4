"""Paths under the files root, opened so that nothing outside it can be reached.

A path is relative to the root, `/`-separated; `.` parts and empty parts are dropped; an
absolute path and a `..` part are refused before anything is opened. Each directory is
then opened from its parent's descriptor with O_NOFOLLOW, and the file itself too: no
symbolic link below the root is ever followed, so a link (or a race that swaps a
directory for a link) cannot lead outside. The root itself may be a link: the operator
chose it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

from nodeloom.errors import NodeError

ENV_ROOT = "NODELOOM_FILES_ROOT"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def path_problem(path: str) -> str | None:
    """Why `path` can never be under the root (absolute, `..`, empty), else None."""
    if "\0" in path:
        return "the path contains a NUL character"
    if path.startswith("/") or path.startswith("~"):
        return "the path is absolute; give it relative to the files root, e.g. reports/q3.csv"
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        return "the path has a `..` part; paths cannot leave the files root"
    if not parts:
        return "the path is empty; name a file, e.g. reports/q3.csv"
    return None


def split(path: str, field: str = "path") -> list[str]:
    """The parts of a path that stays under the root; raises `path_outside_root` else."""
    if not isinstance(path, str):
        raise NodeError(
            f"`{field}` must be a text path relative to the files root; got {type(path).__name__}.",
            code="invalid_parameter",
            retryable=False,
            details={"field": field},
        )
    problem = path_problem(path)
    if problem:
        raise outside(path, problem, field)
    return [part for part in path.split("/") if part not in ("", ".")]


def outside(path: str, why: str, field: str = "path") -> NodeError:
    return NodeError(
        f"`{field}` {path!r} is refused: {why}.",
        code="path_outside_root",
        retryable=False,
        details={"field": field, "path": path},
    )


def root() -> str:
    """The configured files root, checked; raises `files_root` when there is none."""
    configured = os.environ.get(ENV_ROOT, "")
    if not configured:
        raise NodeError(
            f"File nodes work only inside a folder the operator chooses, and {ENV_ROOT} is "
            f"not set. Set it for the server or the CLI, e.g. {ENV_ROOT}=/srv/nodeloom-files.",
            code="files_root",
            retryable=False,
        )
    if not os.path.isdir(configured):
        raise NodeError(
            f"{ENV_ROOT} is {configured!r}, which is not a folder; create it or point "
            f"{ENV_ROOT} at one.",
            code="files_root",
            retryable=False,
        )
    return configured


@contextmanager
def parent_dir(parts: list[str], path: str, *, create: bool) -> Iterator[int]:
    """A descriptor of the folder holding the last part, reached without following links;
    missing folders are made when `create`."""
    fd = os.open(root(), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise not_found(path) from None
                with contextlib.suppress(FileExistsError):  # made meanwhile: open it
                    os.mkdir(part, 0o755, dir_fd=fd)
                child = _open_dir(part, fd, path)
            except OSError as exc:
                raise _refused(exc, part, fd, path) from None
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _open_dir(part: str, fd: int, path: str) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise _refused(exc, part, fd, path) from None


def open_file(parent: int, name: str, flags: int, path: str) -> int:
    """Open the last part without following a link; only regular files are accepted."""
    try:
        flags |= os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        fd = os.open(name, flags, 0o644, dir_fd=parent)
    except FileNotFoundError:
        raise not_found(path) from None
    except FileExistsError:
        raise  # O_EXCL: the caller says what that means
    except OSError as exc:
        raise _refused(exc, name, parent, path) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NodeError(
            f"{path!r} is not a regular file (a folder, a device or a pipe).",
            code="invalid_parameter",
            retryable=False,
            details={"field": "path", "path": path},
        )
    return fd


def not_found(path: str) -> NodeError:
    return NodeError(
        f"{path!r} does not exist under the files root ({ENV_ROOT}); check the name, or "
        "write it first with Write File.",
        code="path_not_found",
        retryable=False,
        details={"field": "path", "path": path},
    )


def _refused(exc: OSError, part: str, parent: int, path: str) -> NodeError:
    try:
        is_link = stat.S_ISLNK(os.lstat(part, dir_fd=parent).st_mode)
    except OSError:
        is_link = False
    if is_link or exc.errno == errno.ELOOP:
        return outside(
            path, f"{part!r} is a symbolic link, and links are not followed under the files root"
        )
    if exc.errno == errno.ENOTDIR:
        return NodeError(
            f"{path!r}: {part!r} is a file, not a folder.",
            code="invalid_parameter",
            retryable=False,
            details={"field": "path", "path": path},
        )
    if exc.errno == errno.EISDIR:
        return NodeError(
            f"{path!r} is a folder; name a file inside it.",
            code="invalid_parameter",
            retryable=False,
            details={"field": "path", "path": path},
        )
    return NodeError(
        f"{path!r} cannot be opened: {exc.strerror}.",
        code="file_error",
        retryable=False,
        details={"field": "path", "path": path},
    )


def open_read(path: Any, field: str = "path") -> BinaryIO:
    """A file under the root, opened for reading through the checked walk: the path is
    refused if it could leave the root (`split`), and no link is followed on the way.
    The preamble Read File, Write File (copying a file reference) and HTTP Request
    (sending one) share."""
    parts = split(path, field)
    with parent_dir(parts, path, create=False) as parent:
        fd = open_file(parent, parts[-1], os.O_RDONLY, path)
    return os.fdopen(fd, "rb")
