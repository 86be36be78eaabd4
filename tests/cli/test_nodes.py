"""`nodeloom nodes`: the catalogue as a table, and every plugin that failed to load.

(`nodeloom nodes --json` is tested with the catalogue, in tests/plugins/test_catalogue.py.)
"""

from __future__ import annotations

import os
import shutil

import pytest

from nodeloom.plugins.registry import Registry

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def builtins() -> Registry:
    return Registry.discover(use_entry_points=False, use_environment=False)


@pytest.fixture(scope="module")
def builtin_types(builtins) -> list[str]:
    return builtins.types


def test_nodes_lists_every_built_in_type_id_and_name_in_full(nodeloom, builtins):
    process = nodeloom("nodes")
    assert process.returncode == 0, process.stderr
    rows = process.stdout.splitlines()
    for type_id in builtins.types:
        name = builtins.definition(type_id).name
        assert any(f" {type_id} " in row and f" {name} " in row for row in rows), (
            f"no row shows '{type_id}' ({name}) whole:\n{process.stdout}"
        )


def test_nodes_shows_a_plugin_that_failed_to_load_with_its_error_and_lists_the_rest(
    nodeloom, fixture_packs, builtin_types
):
    broken = fixture_packs / "broken_pack"
    process = nodeloom("nodes", env={"NODELOOM_NODES_PATH": str(broken)})
    assert process.returncode == 0, process.stderr
    lines = process.stdout.splitlines()
    assert (
        f"failed to load {broken / 'exploding'} (NODELOOM_NODES_PATH): "
        "RuntimeError: fixture definition exploded on purpose"
    ) in lines
    assert (
        f"failed to load {broken / 'no_executor'} (NODELOOM_NODES_PATH): "
        "FileNotFoundError: the folder has no executor.py"
    ) in lines
    listed = process.stdout
    assert " fixture-fine " in listed
    assert all(f" {type_id} " in listed for type_id in builtin_types)


def test_nodes_lists_types_from_every_folder_of_nodeloom_nodes_path(nodeloom, fixture_packs):
    path = os.pathsep.join([str(fixture_packs / "good_pack"), str(fixture_packs / "lazy_pack")])
    process = nodeloom("nodes", env={"NODELOOM_NODES_PATH": path})
    assert process.returncode == 0, process.stderr
    for type_id in ("fixture-shout", "fixture-count", "fixture-heavy"):
        [row] = [row for row in process.stdout.splitlines() if f" {type_id} " in row]
        assert " NODELOOM_NODES_PATH " in row
    assert "failed to load" not in process.stdout


def test_nodes_lists_types_from_an_installed_distributions_entry_point(
    nodeloom, fixture_packs, tmp_path
):
    site = tmp_path / "site"
    package = site / "fixture_dist_nodes"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    shutil.copytree(fixture_packs / "good_pack" / "count", package / "count")
    info = site / "nodeloom_fixture_dist-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: nodeloom-fixture-dist\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text("[nodeloom.nodes]\nfixture-dist = fixture_dist_nodes\n")
    process = nodeloom("nodes", env={"PYTHONPATH": str(site)})
    assert process.returncode == 0, process.stderr
    [row] = [row for row in process.stdout.splitlines() if " fixture-count " in row]
    assert " entry point fixture-dist " in row
