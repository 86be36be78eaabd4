"""The catalogue (`Registry.to_json()`, printed by `nodeloom nodes --json`): everything the
UI needs to render any node, and every plugin that failed to load."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nodeloom.plugins.contract import CATEGORIES
from nodeloom.plugins.discovery import PATH_VARIABLE, path_sources
from nodeloom.plugins.registry import Registry

NODE_KEYS = {
    "id",
    "name",
    "category",
    "description",
    "icon",
    "execution_mode",
    "inputs",
    "outputs",
    "main_output",
    "parameters",
    "side_effects",
    "streaming",
    "trigger",
    "interactive",
    "output_shape",
}
PORT_KEYS = {"id", "socket", "label", "required", "multiple"}
PARAMETER_KEYS = {"id", "type", "label", "default", "required", "hybrid"}


@pytest.fixture(scope="module")
def catalogue() -> dict:
    return Registry.discover(use_entry_points=False, use_environment=False).to_json()


def nodes_json(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run `nodeloom nodes --json` as a real process with exactly this NODELOOM_NODES_PATH."""
    executable = Path(sys.executable).parent / "nodeloom"
    command = str(executable) if executable.is_file() else shutil.which("nodeloom")
    assert command, "the `nodeloom` console script is not installed"
    environment = {k: v for k, v in os.environ.items() if k != PATH_VARIABLE}
    return subprocess.run(
        [command, "nodes", "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        stdin=subprocess.DEVNULL,
        env={**environment, **env},
        timeout=60,
        check=False,
    )


# --- shape --------------------------------------------------------------------------------


def test_the_catalogue_holds_nodes_socket_types_coercions_common_parameters_and_failures(
    catalogue,
):
    assert set(catalogue) == {
        "nodes",
        "socket_types",
        "coercions",
        "common_parameters",
        "failures",
    }


def test_the_catalogue_is_plain_json(catalogue):
    assert json.loads(json.dumps(catalogue)) == catalogue


def test_nodes_appear_once_each_sorted_by_type_id(catalogue):
    ids = [entry["id"] for entry in catalogue["nodes"]]
    assert ids == sorted(set(ids))


def test_every_node_entry_carries_what_the_ui_needs_to_render_it(catalogue):
    for entry in catalogue["nodes"]:
        assert set(entry) == NODE_KEYS, entry["id"]
        assert entry["category"] in CATEGORIES, entry["id"]
        assert entry["execution_mode"] in ("structural", "flow", "hybrid"), entry["id"]
        assert entry["side_effects"] in ("pure", "idempotent", "external"), entry["id"]
        for port in entry["inputs"] + entry["outputs"]:
            assert set(port) >= PORT_KEYS, (entry["id"], port)
        for parameter in entry["parameters"]:
            assert set(parameter) >= PARAMETER_KEYS, (entry["id"], parameter)


def test_every_main_output_is_one_of_the_nodes_output_ports(catalogue):
    for entry in catalogue["nodes"]:
        if entry["outputs"]:
            assert entry["main_output"] in [p["id"] for p in entry["outputs"]], entry["id"]


def test_every_port_and_hybrid_parameter_uses_a_socket_type_in_the_catalogue(catalogue):
    sockets = {s["id"] for s in catalogue["socket_types"]}
    for entry in catalogue["nodes"]:
        for port in entry["inputs"] + entry["outputs"]:
            assert port["socket"] in sockets, (entry["id"], port["id"])
        for parameter in entry["parameters"]:
            if parameter["hybrid"]:
                assert parameter["socket"] in sockets, (entry["id"], parameter["id"])


def test_socket_types_carry_a_colour_and_a_shape(catalogue):
    for socket in catalogue["socket_types"]:
        assert set(socket) == {"id", "color", "shape", "description", "structural"}
        assert re.fullmatch(r"#[0-9a-f]{6}", socket["color"]), socket
        assert socket["shape"] in ("circle", "square", "diamond", "dashed-circle"), socket
    assert "data" in {s["id"] for s in catalogue["socket_types"]}


def test_coercions_are_from_to_pairs_of_known_socket_types(catalogue):
    sockets = {s["id"] for s in catalogue["socket_types"]}
    assert catalogue["coercions"], "the coercion table is empty"
    for coercion in catalogue["coercions"]:
        assert set(coercion) == {"from", "to"}
        assert coercion["from"] in sockets and coercion["to"] in sockets, coercion
    assert {"from": "int", "to": "float"} in catalogue["coercions"]


def test_common_parameters_are_the_node_settings(catalogue):
    assert [p["id"] for p in catalogue["common_parameters"]] == [
        "name",
        "on_error",
        "retry",
        "activation",
        "timeout",
        "side_effects",
        "pinned",
    ]
    [on_error] = [p for p in catalogue["common_parameters"] if p["id"] == "on_error"]
    assert on_error["options"] == ["stop", "continue", "error_output"]
    assert on_error["default"] == "stop"


def test_the_built_in_catalogue_has_no_failures(catalogue):
    assert catalogue["failures"] == []


def test_plugins_that_failed_to_load_are_listed_with_origin_location_and_error(pack):
    root = pack("broken_pack")
    document = Registry.discover(paths=[str(root)], use_entry_points=False).to_json()
    assert {
        "origin": "NODELOOM_NODES_PATH",
        "location": str(root / "exploding"),
        "error": "RuntimeError: fixture definition exploded on purpose",
    } in document["failures"]
    assert "fixture-fine" in [entry["id"] for entry in document["nodes"]]


# --- `nodeloom nodes --json` --------------------------------------------------------------


@pytest.mark.e2e
def test_nodes_json_prints_one_json_document_equal_to_registry_to_json():
    process = nodes_json({})
    assert process.returncode == 0, process.stderr
    [line] = process.stdout.splitlines()
    assert json.loads(line) == Registry.discover().to_json()


@pytest.mark.e2e
def test_nodes_json_includes_the_nodes_and_failures_of_nodeloom_nodes_path(
    monkeypatch, forget_modules
):
    broken = Path(__file__).parent / "fixtures" / "broken_pack"
    process = nodes_json({PATH_VARIABLE: str(broken)})
    assert process.returncode == 0, process.stderr
    printed = json.loads(process.stdout)
    assert [f["location"] for f in printed["failures"]] == [
        str(broken / "exploding"),
        str(broken / "no_executor"),
        str(broken / "no_export"),
    ]
    monkeypatch.setenv(PATH_VARIABLE, str(broken))
    [source] = path_sources()
    forget_modules(source.package)
    assert printed == Registry.discover().to_json()
