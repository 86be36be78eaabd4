"""Write File: create, overwrite or append under the files root; file references copied."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import nodeloom
from nodeloom.errors import NodeError
from nodeloom.nodes.integration.write_file.definition import definition
from nodeloom.nodes.integration.write_file.executor import executor
from nodeloom.plugins.contract import Services
from nodeloom.store import Store
from nodeloom.testing.builders import chain, node
from nodeloom.testing.context import ExecutorContext, call_executor


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    monkeypatch.setenv("NODELOOM_FILES_ROOT", str(folder))
    return folder


async def write(data: dict, value: object = None) -> object:
    inputs = {"input": value} if value is not None else {}
    result, _ = await call_executor(executor, data, inputs)
    return result.outputs["output"]


async def refused(data: dict) -> NodeError:
    with pytest.raises(NodeError) as caught:
        await write(data)
    return caught.value


def test_the_definition_declares_the_public_contract() -> None:
    assert definition.id == executor.node_type == "write-file"
    assert [p.id for p in definition.parameters] == ["path", "content", "mode"]
    assert definition.parameter("mode").options == ("create", "overwrite", "append")
    assert definition.side_effects == "external"


async def test_text_is_written_as_utf8_into_folders_made_on_the_way(root: Path) -> None:
    out = await write({"path": "a/b/note.txt", "content": "héllo"})
    assert out == {"path": "a/b/note.txt", "size": 6}
    assert (root / "a" / "b" / "note.txt").read_text(encoding="utf-8") == "héllo"


async def test_json_content_is_written_as_indented_json(root: Path) -> None:
    await write({"path": "o.json", "content": {"id": 7, "tags": ["x"]}})
    assert json.loads((root / "o.json").read_text()) == {"id": 7, "tags": ["x"]}
    assert (root / "o.json").read_text().endswith("}\n")


async def test_without_content_the_spine_input_is_written(root: Path) -> None:
    await write({"path": "in.json"}, [1, 2])
    assert json.loads((root / "in.json").read_text()) == [1, 2]


async def test_create_never_replaces_an_existing_file(root: Path) -> None:
    await write({"path": "once.txt", "content": "first"})
    error = await refused({"path": "once.txt", "content": "second"})
    assert error.code == "file_exists"
    assert "Use mode overwrite" in str(error)
    assert (root / "once.txt").read_text() == "first"


async def test_overwrite_replaces_the_file_and_leaves_no_temporary_file(root: Path) -> None:
    (root / "f.txt").write_text("a much longer old content")
    out = await write({"path": "f.txt", "content": "new", "mode": "overwrite"})
    assert out == {"path": "f.txt", "size": 3}
    assert [p.name for p in root.iterdir()] == ["f.txt"]
    assert (root / "f.txt").read_text() == "new"


async def test_append_adds_text_and_json_lines_records_to_the_end(root: Path) -> None:
    await write({"path": "log.jsonl", "content": {"n": 1}, "mode": "append"})
    out = await write({"path": "log.jsonl", "content": {"n": 2}, "mode": "append"})
    assert (root / "log.jsonl").read_text() == '{"n":1}\n{"n":2}\n'
    assert out["size"] == 16


async def test_paths_out_of_the_root_are_refused_and_nothing_is_written_outside(
    root: Path,
) -> None:
    outside = root.parent / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    (root / "file-link.txt").symlink_to(outside / "target.txt")
    for path, mode in (
        ("../outside/x.txt", "create"),
        ("link/x.txt", "create"),
        ("file-link.txt", "append"),
        (str(outside / "x.txt"), "overwrite"),
    ):
        error = await refused({"path": path, "content": "pwned", "mode": mode})
        assert error.code == "path_outside_root", path
    assert list(outside.iterdir()) == []


async def test_overwrite_replaces_a_symbolic_link_itself_never_its_target(root: Path) -> None:
    target = root.parent / "victim.txt"
    target.write_text("safe")
    (root / "f.txt").symlink_to(target)
    await write({"path": "f.txt", "content": "new", "mode": "overwrite"})
    assert target.read_text() == "safe"
    assert not (root / "f.txt").is_symlink()


async def test_a_file_reference_is_copied_byte_for_byte(root: Path) -> None:
    payload = bytes(range(256)) * 5000
    (root / "in.bin").write_bytes(payload)
    ref = {"$ref": "file:in.bin", "mime": "application/octet-stream", "size": len(payload)}
    out = await write({"path": "copy/out.bin", "content": ref})
    assert out == {"path": "copy/out.bin", "size": len(payload)}
    assert (root / "copy" / "out.bin").read_bytes() == payload


async def test_a_file_appended_to_itself_doubles_once_and_stops(root: Path) -> None:
    (root / "twice.txt").write_text("ab")
    ref = {"$ref": "file:twice.txt", "mime": "text/plain", "size": 2}
    await write({"path": "twice.txt", "content": ref, "mode": "append"})
    assert (root / "twice.txt").read_text() == "abab"


async def test_a_forged_reference_reaches_no_further_than_a_path_would(root: Path) -> None:
    (root.parent / "secret.txt").write_text("s3cret")
    forged = {"$ref": "file:../secret.txt", "mime": "text/plain", "size": 6}
    error = await refused({"path": "leak.txt", "content": forged})
    assert (error.code, error.details["field"]) == ("path_outside_root", "content")
    blob = {"$ref": "blob:" + "0" * 64, "mime": "application/json", "size": 6}
    error = await refused({"path": "leak.txt", "content": blob})
    assert error.code == "invalid_parameter"
    assert not (root / "leak.txt").exists()


async def test_read_file_then_write_file_copies_a_binary_file_in_a_graph(root: Path) -> None:
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 1000)
    doc = chain(
        node("read", "read-file", path="photo.png"),
        node("save", "write-file", path="backup/{{ $json.name }}"),
    )
    result = await nodeloom.load(doc).run()
    assert result.error is None, result.error
    assert result.outputs["save"]["output"] == {"path": "backup/photo.png", "size": 1008}
    assert (root / "backup" / "photo.png").read_bytes() == (root / "photo.png").read_bytes()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(f"sqlite:///{tmp_path / 'n.db'}", blob_dir=tmp_path / "blobs")
    try:
        yield opened
    finally:
        await opened.close()


def with_blobs(store: Store) -> ExecutorContext:
    unused = Path("unused")
    services = Services(unused, unused / "s.db", blobs=store.binaries)
    return ExecutorContext(node_type="write-file", services=services)


async def test_a_blob_reference_of_the_run_store_is_copied_byte_for_byte(
    root: Path, store: Store
) -> None:
    payload = b"PK\x03\x04" + bytes(range(256)) * 5000
    writer = store.binaries.writer("bundle.zip")
    for start in range(0, len(payload), 4096):
        writer.write(payload[start : start + 4096])
    ref = writer.finish()
    result, _ = await call_executor(
        executor, {"path": f"out/{ref['name']}", "content": ref}, {}, with_blobs(store)
    )
    assert result.outputs["output"] == {"path": "out/bundle.zip", "size": len(payload)}
    assert (root / "out" / "bundle.zip").read_bytes() == payload


async def test_a_blob_reference_the_store_did_not_sign_is_refused(root: Path, store: Store) -> None:
    ref = store.binaries.writer("x.bin")
    ref.write(b"someone else's")
    real = ref.finish()
    for forged in ({**real, "sig": "0" * 32}, {k: v for k, v in real.items() if k != "sig"}):
        with pytest.raises(NodeError) as caught:
            await call_executor(
                executor, {"path": "leak.bin", "content": forged}, {}, with_blobs(store)
            )
        assert (caught.value.code, caught.value.details["field"]) == (
            "invalid_parameter",
            "content",
        )
        assert "cannot be read" in str(caught.value)
    assert not (root / "leak.bin").exists()
    error = await refused({"path": "leak.bin", "content": real})  # a run without a store
    assert "without a run store" in str(error)
