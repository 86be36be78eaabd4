"""The child side of the Code node: a script run as `python -I -X utf8 runner.py MEM CPU`.

Never imported by the engine; it imports only the standard library, and as little of it
as it can, because every Code node execution pays its start-up.

Protocol (the parent is `process.py`):

- argv: the address-space limit in bytes, the CPU-time limit in seconds and the lifeline
  fd. Both limits are applied, with a core-size limit of 0, before anything else is read.
- the lifeline: the read end of a pipe whose only write end the parent holds. Before the
  user's code runs, a watcher process is forked that blocks reading it: when the parent
  dies (even by SIGKILL) the read returns end-of-file and the watcher kills this whole
  process group, the user's code and anything it started. A separate process, not a
  thread, so the user's code cannot delay it by holding the GIL.
- stdin: one JSON document `{"code": str, "input": any, "nodes": {name: any}}`.
- the real stdout (kept as a private fd) receives exactly one JSON document, the outcome:
  `{"ok": true, "result": ...}` or
  `{"ok": false, "kind": KIND, "message": str, "traceback": str}` with KIND one of
  syntax, signature, exception, serialise, memory.
- everything the user's code writes, through `print`, `sys.stderr` or to fd 1 and 2
  (C extensions, subprocesses), goes to stderr; the parent returns it as logs.
"""

import resource
import sys

FILENAME = "<code>"
CO_VARARGS = 0x04
CO_COROUTINE = 0x80
SIGNATURE_HELP = (
    "write `def main(input, nodes):` - `input` is this node's input, `nodes` maps each "
    "upstream node's name to its output - and return the node's output"
)


def _lower_limit(which: int, value: int, *, hard_too: bool = True) -> None:
    _soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    try:  # noqa: SIM105 - contextlib would be one more import for every run
        resource.setrlimit(which, (value, value if hard_too else hard))
    except (ValueError, OSError):  # a kernel that refuses this limit (not Linux)
        pass


def _apply_limits(memory_bytes: int, cpu_seconds: int) -> None:
    _lower_limit(resource.RLIMIT_CORE, 0)
    _lower_limit(resource.RLIMIT_AS, memory_bytes)
    # Soft CPU limit only: SIGXCPU, which the parent reports as a timeout. The parent's
    # wall-clock timeout kills the process anyway.
    _lower_limit(resource.RLIMIT_CPU, cpu_seconds, hard_too=False)


def _run(payload: dict) -> tuple[bool, object]:
    """Run the user's code. Returns (True, result JSON text) or (False, error document)."""
    import json

    source = payload["code"]
    try:
        compiled = compile(source, FILENAME, "exec")
    except (SyntaxError, ValueError) as exc:
        return False, _syntax_error(exc)
    _register_source(source)
    namespace = {"__name__": "__code__", "__builtins__": __builtins__}
    try:
        exec(compiled, namespace)
        main = namespace.get("main")
        problem = _check_main(main)
        if problem:
            return False, {"kind": "signature", "message": problem, "traceback": ""}
        result = main(payload["input"], payload["nodes"])
    except MemoryError as exc:
        return False, _exception(exc, kind="memory")
    except BaseException as exc:  # SystemExit too: the user's code ends here, not us
        return False, _exception(exc, kind="exception")
    try:
        return True, json.dumps(result)
    except MemoryError:
        raise
    except BaseException as exc:  # a dict subclass may run anything while encoded
        return False, _serialise_error(result, exc)


def _register_source(source: str) -> None:
    """Let tracebacks (and `inspect`) show the user's source lines for `<code>`."""
    import linecache

    linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)


def _syntax_error(exc: Exception) -> dict:
    import traceback

    detail = "".join(traceback.format_exception_only(type(exc), exc))
    if not isinstance(exc, SyntaxError):  # null bytes in the source
        return {"kind": "syntax", "message": f"SyntaxError: {exc}", "traceback": detail}
    where = f" (line {exc.lineno})" if exc.lineno else ""
    snippet = [line for line in detail.splitlines()[1:-1] if line.strip()]
    message = "\n".join([f"SyntaxError: {exc.msg}{where}", *snippet])
    return {"kind": "syntax", "message": message, "traceback": detail}


def _check_main(main: object) -> str | None:
    if main is None:
        return f"the code defines no `main` function; {SIGNATURE_HELP}"
    if not callable(main):
        return f"`main` is a {type(main).__name__}, not a function; {SIGNATURE_HELP}"
    if type(main) is not type(_check_main):  # a class or a builtin: let the call decide
        return None
    code = main.__code__
    positional = code.co_argcount
    keyword_only = code.co_varnames[positional : positional + code.co_kwonlyargcount]
    names = list(code.co_varnames[:positional])
    if code.co_flags & CO_VARARGS:
        names.append("*" + code.co_varnames[positional + code.co_kwonlyargcount])
    elif keyword_only:
        names.append("*")
    names.extend(keyword_only)
    shown = f"`def main({', '.join(names)})`"
    if code.co_flags & CO_COROUTINE:
        return (
            f"`main` is `async def`; the Code node calls it as a plain function: "
            f"{SIGNATURE_HELP} (use asyncio.run inside it for async code)"
        )
    required = positional - len(main.__defaults__ or ())
    missing = [name for name in keyword_only if name not in (main.__kwdefaults__ or {})]
    if required > 2 or (positional < 2 and not code.co_flags & CO_VARARGS) or missing:
        return f"`main` must take two arguments, yours is {shown}; {SIGNATURE_HELP}"
    return None


def _exception(exc: BaseException, *, kind: str) -> dict:
    """The user's exception as `Type: message` and a traceback of the user's frames only."""
    import traceback

    runner = _run.__code__.co_filename
    try:
        text = str(exc)
    except Exception:
        text = "<the exception's str() failed>"
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    try:
        report = traceback.TracebackException.from_exception(exc)
        _strip_frames(report, runner, set())
        detail = "".join(report.format())
    except Exception:  # MemoryError included: the message alone will do
        detail = ""
    return {"kind": kind, "message": message, "traceback": detail}


def _strip_frames(report: object, filename: str, seen: set[int]) -> None:
    """Drop the runner's frames from an exception report and everything chained to it."""
    import traceback

    if report is None or id(report) in seen:
        return
    seen.add(id(report))
    frames = [frame for frame in report.stack if frame.filename != filename]
    report.stack = traceback.StackSummary.from_list(frames)
    _strip_frames(report.__cause__, filename, seen)
    _strip_frames(report.__context__, filename, seen)
    for inner in getattr(report, "exceptions", None) or ():
        _strip_frames(inner, filename, seen)


def _serialise_error(result: object, exc: BaseException) -> dict:
    try:
        found = _first_unserialisable(result, "the result", set())
    except RecursionError:
        found = None
    if found is None:  # e.g. nested too deeply, or a custom container that raised
        detail = f"{type(exc).__name__}: {exc}"
        message = f"main returned a value that cannot be written as JSON ({detail})"
    else:
        where, value = found
        kind = type(value)
        name = (
            kind.__qualname__
            if kind.__module__ == "builtins"
            else f"{kind.__module__}.{kind.__qualname__}"
        )
        message = (
            f"main returned a value that is not JSON-serialisable: {where} is a {name}; "
            f"convert it first ({_suggestion(value)})"
        )
    return {"kind": "serialise", "message": message, "traceback": ""}


def _first_unserialisable(value: object, where: str, seen: set[int]) -> tuple[str, object] | None:
    if value is None or isinstance(value, (str, int, float, bool)):
        return None
    if id(value) in seen:
        return None  # a cycle: reported from json's own message
    if isinstance(value, (list, tuple)):
        seen.add(id(value))
        for index, item in enumerate(value):
            found = _first_unserialisable(item, f"{where}[{index}]", seen)
            if found:
                return found
        return None
    if isinstance(value, dict):
        seen.add(id(value))
        for key, item in value.items():
            if not (key is None or isinstance(key, (str, int, float, bool))):
                return f"a key of {where}", key
            found = _first_unserialisable(item, f"{where}[{key!r}]", seen)
            if found:
                return found
        return None
    return where, value


def _suggestion(value: object) -> str:
    name = type(value).__name__
    if name in ("datetime", "date", "time"):
        return "e.g. value.isoformat()"
    if isinstance(value, (set, frozenset)) or name.endswith("generator"):
        return "e.g. list(value)"
    if isinstance(value, (bytes, bytearray)):
        return "e.g. value.decode() or base64"
    if name == "Decimal":
        return "e.g. float(value) or str(value)"
    return "to a dict, list, str, number, bool or None"


def _watch_lifeline(fd: int) -> int:
    """Fork the watcher (see the module docstring); returns its pid."""
    import os

    pid = os.fork()
    if pid:
        os.close(fd)  # the user's code never sees the lifeline
        return pid
    try:  # the watcher keeps no pipe of the child's open: only the lifeline
        os.closerange(0, fd)
        os.closerange(fd + 1, 1 << 16)
        while os.read(fd, 1):
            pass
    finally:
        os.killpg(0, 9)  # SIGKILL to the group, the watcher included
        os._exit(0)


def _write_all(fd: int, data: bytes) -> None:
    import os

    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def main() -> None:
    _apply_limits(int(sys.argv[1]), int(sys.argv[2]))
    import os

    watcher = _watch_lifeline(int(sys.argv[3]))

    result_fd = os.dup(1)  # the private result channel; not inherited by subprocesses
    os.dup2(2, 1)  # fd-level writes to stdout (C code, subprocesses) become logs
    sys.stdout = sys.stderr  # and so do prints, in order with the user's stderr writes
    sys.argv = [FILENAME]
    try:
        import json

        ok, outcome = _run(json.loads(sys.stdin.buffer.read()))
        if ok:
            document = '{"ok": true, "result": ' + outcome + "}"
        else:
            document = json.dumps({"ok": False, **outcome})
    except MemoryError:
        document = '{"ok": false, "kind": "memory", "message": "MemoryError", "traceback": ""}'
    try:  # noqa: SIM105 - contextlib would be one more import for every run
        sys.stderr.flush()
    except Exception:  # the user may have replaced or closed it
        pass
    _write_all(result_fd, document.encode())
    try:  # the parent kills the group anyway; reaping the watcher leaves no zombie
        os.kill(watcher, 9)
        os.waitpid(watcher, 0)
    except OSError:  # the user's code reaped or killed it
        pass
    os._exit(0)  # do not wait for threads the user's code left running


if __name__ == "__main__":
    main()
