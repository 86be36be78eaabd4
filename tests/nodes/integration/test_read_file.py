"""Read File: text, JSON or a file reference, and never anything outside the files root."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import nodeloom
from nodeloom.errors import GraphError, NodeError
from nodeloom.nodes.integration.read_file.definition import definition
from nodeloom.nodes.integration.read_file.executor import MAX_TEXT_BYTES, executor
from nodeloom.testing.builders import node
from nodeloom.testing.context import call_executor

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "root"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "notes.txt").write_text("héllo\n", encoding="utf-8")
    (folder / "data" / "order.json").write_text('{"id": 7}', encoding="utf-8")
    (folder / "data" / "logo").write_bytes(PNG)
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    monkeypatch.setenv("NODELOOM_FILES_ROOT", str(folder))
    return folder


async def read(data: dict) -> object:
    result, _ = await call_executor(executor, data)
    return result.outputs["output"]


async def refused(data: dict) -> NodeError:
    with pytest.raises(NodeError) as caught:
        await read(data)
    return caught.value


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "read-file"
    assert [p.id for p in definition.parameters] == ["path", "as"]
    assert definition.parameter("as").options == ("auto", "text", "json", "binary")


async def test_a_text_file_is_read_as_text_and_a_json_file_as_json_by_default(root: Path) -> None:
    assert await read({"path": "data/notes.txt"}) == "héllo\n"
    assert await read({"path": "./data//order.json"}) == {"id": 7}


async def test_as_overrides_the_media_type(root: Path) -> None:
    assert await read({"path": "data/order.json", "as": "text"}) == '{"id": 7}'
    assert await read({"path": "data/notes.txt", "as": "binary"}) == {
        "$ref": "file:data/notes.txt",
        "mime": "text/plain",
        "size": 7,
        "name": "notes.txt",
    }


async def test_a_binary_file_becomes_a_file_reference_with_its_sniffed_type(root: Path) -> None:
    assert await read({"path": "data/logo"}) == {
        "$ref": "file:data/logo",
        "mime": "image/png",
        "size": len(PNG),
        "name": "logo",
    }


async def test_a_parent_step_or_an_absolute_path_is_refused_at_run_time(root: Path) -> None:
    for path in ("../secret.txt", "data/../../secret.txt", str(root.parent / "secret.txt")):
        error = await refused({"path": path})
        assert error.code == "path_outside_root"
        assert error.details["field"] == "path"


async def test_a_symbolic_link_out_of_the_root_is_refused_as_a_file_or_a_folder(
    root: Path,
) -> None:
    (root / "escape.txt").symlink_to(root.parent / "secret.txt")
    (root / "up").symlink_to(root.parent)
    for path in ("escape.txt", "up/secret.txt"):
        error = await refused({"path": path})
        assert error.code == "path_outside_root"
        assert "is a symbolic link" in str(error)


async def test_a_missing_file_names_the_path_and_the_root_variable(root: Path) -> None:
    error = await refused({"path": "data/none.txt"})
    assert error.code == "path_not_found"
    assert "'data/none.txt' does not exist under the files root (NODELOOM_FILES_ROOT)" in str(error)


async def test_without_a_configured_root_nothing_is_read(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NODELOOM_FILES_ROOT")
    error = await refused({"path": "data/notes.txt"})
    assert error.code == "files_root"
    assert "NODELOOM_FILES_ROOT" in str(error)


async def test_text_that_is_not_utf8_says_to_read_it_as_binary(root: Path) -> None:
    (root / "latin.txt").write_bytes("café".encode("latin-1"))
    error = await refused({"path": "latin.txt"})
    assert error.code == "invalid_file_content"
    assert "Read it with as: binary" in str(error)


async def test_text_over_the_limit_is_refused_but_binary_of_any_size_is_referenced(
    root: Path,
) -> None:
    with (root / "big.txt").open("wb") as file:
        file.truncate(MAX_TEXT_BYTES + 1)
    error = await refused({"path": "big.txt", "as": "text"})
    assert error.code == "file_too_large"
    assert (await read({"path": "big.txt", "as": "binary"}))["size"] == MAX_TEXT_BYTES + 1


def test_validation_refuses_an_inline_path_that_leaves_the_root() -> None:
    with pytest.raises(GraphError) as caught:
        nodeloom.load({"nodes": [node("r", "read-file", path="../etc/passwd")], "edges": []})
    [issue] = caught.value.issues
    assert (issue.node_id, issue.field, issue.code) == ("r", "path", "invalid_parameter")
    assert "`..`" in issue.message


async def test_a_path_built_by_an_expression_is_checked_when_the_run_reaches_it(
    root: Path,
) -> None:
    doc = {
        "nodes": [node("r", "read-file", path="{{ '..' + '/secret.txt' }}")],
        "edges": [],
    }
    result = await nodeloom.load(doc).run()
    assert result.error["code"] == "path_outside_root"
    assert os.environ["NODELOOM_FILES_ROOT"] == str(root)
    assert json.dumps(result.outputs).find("outside") == -1
