"""Fixtures for the plugin tests: fixture packs copied to a fresh folder per test, and tiny
installed distributions whose `nodeloom.nodes` entry points `importlib.metadata` really sees.

A pack is copied before use so that its modules import under a package name of their own
(discovery names an external package after its folder): `sys.modules` starts clean in
every test, whatever ran before.
"""

from __future__ import annotations

import itertools
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nodeloom.plugins.discovery import ENTRY_POINT_GROUP, PATH_VARIABLE, path_sources
from nodeloom.plugins.registry import Registry

FIXTURES = Path(__file__).parent / "fixtures"

_numbers = itertools.count()


def package_of(root: Path) -> str:
    """The package name discovery imports an external folder's modules under."""
    [source] = path_sources(str(root))
    return source.package


@pytest.fixture(autouse=True)
def no_nodes_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests choose their node sources; the developer's environment must not leak in."""
    monkeypatch.delenv(PATH_VARIABLE, raising=False)


@pytest.fixture
def forget_modules() -> Iterator[Callable[[str], None]]:
    """Register package names whose modules are dropped from sys.modules after the test."""
    packages: list[str] = []
    yield packages.append
    for name in list(sys.modules):
        if any(name == p or name.startswith(p + ".") for p in packages):
            del sys.modules[name]


@pytest.fixture
def pack(tmp_path: Path, forget_modules: Callable[[str], None]) -> Callable[[str], Path]:
    """Copy a fixture pack into tmp_path; returns the copy's folder."""

    def copy(name: str) -> Path:
        target = tmp_path / "packs" / f"{name}_{next(_numbers)}"
        shutil.copytree(FIXTURES / name, target, ignore=shutil.ignore_patterns("__pycache__"))
        forget_modules(package_of(target))
        return target

    return copy


@pytest.fixture
def discover(pack: Callable[[str], Path]) -> Callable[..., Registry]:
    """Discover built-ins plus copies of the named packs (no entry points, no env)."""

    def run(*names: str, builtins: bool = True) -> Registry:
        return Registry.discover(
            paths=[str(pack(name)) for name in names],
            builtins=builtins,
            use_entry_points=False,
            use_environment=False,
        )

    return run


class Site:
    """A folder on sys.path holding installed distributions, written by hand the way an
    installer would: the package, and `<name>-<version>.dist-info/` with METADATA and
    entry_points.txt."""

    def __init__(self, root: Path, forget: Callable[[str], None]) -> None:
        self.root = root
        self._forget = forget

    def package(self, name: str, pack_name: str | None = None) -> Path:
        """A package `name` holding a copy of a fixture pack's node folders (or nothing)."""
        folder = self.root / name
        if pack_name is None:
            folder.mkdir(parents=True)
        else:
            shutil.copytree(
                FIXTURES / pack_name, folder, ignore=shutil.ignore_patterns("__pycache__")
            )
        (folder / "__init__.py").write_text('"""Node folders of a fixture distribution."""\n')
        self._forget(name)
        return folder

    def module(self, name: str, text: str = "") -> Path:
        path = self.root / f"{name}.py"
        path.write_text(text)
        self._forget(name)
        return path

    def distribution(self, name: str, entry_points: dict[str, str]) -> Path:
        info = self.root / f"{name.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
        lines = [f"[{ENTRY_POINT_GROUP}]", *(f"{k} = {v}" for k, v in entry_points.items())]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        return info


@pytest.fixture
def site(
    tmp_path: Path, forget_modules: Callable[[str], None], monkeypatch: pytest.MonkeyPatch
) -> Site:
    """A fresh site folder, prepended to sys.path (import caches invalidated) for the test."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return Site(root, forget_modules)


@pytest.fixture
def unique() -> Callable[[str], str]:
    """Names no other test in this process uses (imported modules outlive a test)."""
    return lambda prefix: f"{prefix}_{next(_numbers)}"
