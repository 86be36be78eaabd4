"""Importing what a function reference names, and turning it into an Agno tool.

A module reference is imported with the working directory on the import path. A file
reference is executed afresh at each build under a module name unique to its path
(`nodeloom_functions_<hash>`), with its own folder and the working directory on the
import path, so it can import its neighbours; an edited file takes effect on the next
build. Every failure is a NodeError `tool_not_found` naming the reference.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.tools.references import Reference

FILE_MODULE_PREFIX = "nodeloom_functions_"
# Checked before anything is imported; raises to refuse. The server sets it (its
# allow-list, see nodeloom.tools.allow_list); None elsewhere.
restriction: Callable[[Reference], None] | None = None


def not_found(message: str, reference: Reference | str) -> NodeError:
    text = reference.text if isinstance(reference, Reference) else reference
    return NodeError(message, code="tool_not_found", retryable=False, details={"reference": text})


def load_tool(reference: Reference) -> tuple[Any, list[str]]:
    """The Agno tool a reference names and the tool names the model will see."""
    if restriction is not None:
        restriction(reference)
    module = _import_file(reference) if reference.path is not None else _import_module(reference)
    target: Any = module
    owner = f"module '{module.__name__}'" if reference.module else f"file '{reference.path}'"
    for part in reference.attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise not_found(
                f"function reference {reference.text!r}: {owner} has no attribute {part!r}"
                + _suggestion(part, target),
                reference,
            ) from None
        owner = f"'{part}'"
    return _as_tool(target, reference)


def _as_tool(target: Any, reference: Reference) -> tuple[Any, list[str]]:
    from agno.tools import Toolkit
    from agno.tools.function import Function

    text = reference.text
    if isinstance(target, Toolkit):
        names = list(target.functions)
        if not names:
            raise not_found(f"function reference {text!r}: the toolkit has no functions", text)
        return target, names
    if isinstance(target, Function):  # a function decorated with Agno's @tool
        return target, [target.name]
    if inspect.isclass(target):
        raise not_found(
            f"function reference {text!r} names a class ({target.__name__}); name a function, "
            "or an instance of an Agno Toolkit",
            text,
        )
    if not callable(target):
        raise not_found(
            f"function reference {text!r} names a {type(target).__name__}, which is not "
            "callable; name a function",
            text,
        )
    name = getattr(target, "__name__", None)
    if not isinstance(name, str) or not name.isidentifier():
        raise not_found(
            f"function reference {text!r} names a callable without a usable name "
            f"({name or type(target).__name__}); the model calls a tool by its name, so "
            "name a def function",
            text,
        )
    return target, [name]


def _import_module(reference: Reference) -> ModuleType:
    assert reference.module is not None
    with _importable(Path.cwd()):
        try:
            return importlib.import_module(reference.module)
        except (Exception, SystemExit) as exc:
            hint = ""
            if isinstance(exc, ModuleNotFoundError) and exc.name == reference.module.split(".")[0]:
                hint = (
                    f"; install it, or run nodeloom from the folder that holds it "
                    f"(the working directory is {Path.cwd()})"
                )
            raise not_found(
                f"function reference {reference.text!r}: module '{reference.module}' could "
                f"not be imported: {_describe(exc)}{hint}",
                reference,
            ) from exc


def _import_file(reference: Reference) -> ModuleType:
    assert reference.path is not None
    path = Path(reference.path).expanduser()
    if not path.is_absolute():
        path = Path.cwd() / path
    path = path.resolve()
    if not path.is_file():
        where = (
            ""
            if Path(reference.path).is_absolute()
            else (f" (relative paths start at the working directory, {Path.cwd()})")
        )
        raise not_found(f"function reference {reference.text!r}: no file {path}{where}", reference)
    name = FILE_MODULE_PREFIX + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise not_found(
            f"function reference {reference.text!r}: {path} cannot be imported", reference
        )
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(name)
    sys.modules[name] = module  # dataclasses, pickling and typing look the module up here
    try:
        with _importable(Path.cwd(), path.parent):
            spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous
        raise not_found(
            f"function reference {reference.text!r}: {path} could not be imported: "
            f"{_describe(exc)}",
            reference,
        ) from exc
    return module


@contextlib.contextmanager
def _importable(*folders: Path) -> Iterator[None]:
    """Put `folders` at the front of sys.path for the duration of an import."""
    added = [str(folder) for folder in folders if str(folder) not in sys.path]
    added = list(dict.fromkeys(added))
    sys.path[:0] = added
    try:
        yield
    finally:
        for folder in added:
            with contextlib.suppress(ValueError):
                sys.path.remove(folder)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r}) while being imported"
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    return f"{type(exc).__name__}: {exc}"


def _suggestion(name: str, owner: Any) -> str:
    candidates = (
        [
            attribute
            for attribute, value in vars(owner).items()
            if callable(value) and not attribute.startswith("_")
        ]
        if hasattr(owner, "__dict__")
        else []
    )
    close = difflib.get_close_matches(name, candidates, n=1)
    if close:
        return f"; did you mean {close[0]!r}?"
    if candidates and len(candidates) <= 20:
        return f"; it has: {', '.join(sorted(candidates))}"
    return ""


__all__ = ["FILE_MODULE_PREFIX", "load_tool", "not_found"]
