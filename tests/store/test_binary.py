"""Binary content in the blob area: streamed in, kept once by digest, signed references,
held by the runs whose values carry them (nodeloom.store.binary)."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from nodeloom.store import Store

DOCUMENT = {"nodes": [], "edges": []}


# `store`: each test on SQLite and on a real throwaway Postgres (nodeloom.testing.stores).


def keep(store: Store, name: str, chunks: list[bytes], mime: str | None = None) -> dict:
    writer = store.binaries.writer(name, mime)
    for chunk in chunks:
        writer.write(chunk)
    return writer.finish()


def blob_files(store: Store) -> list[Path]:
    return [p for p in store.blob_dir.glob("??/*") if p.is_file()]


async def test_the_same_content_written_twice_in_pieces_is_one_file_named_by_its_digest(
    store: Store,
) -> None:
    content = b"%PDF-1.7 " + bytes(range(256)) * 100
    first = keep(store, "a.pdf", [content[:1000], content[1000:]], "application/pdf")
    second = keep(store, "../../b.pdf", [content])
    digest = hashlib.sha256(content).hexdigest()
    assert first["$ref"] == second["$ref"] == f"blob:{digest}"
    assert (first["size"], first["mime"], first["name"]) == (
        len(content),
        "application/pdf",
        "a.pdf",
    )
    assert second["name"] == "b.pdf" and second["mime"] == "application/pdf"  # by its name
    assert blob_files(store) == [store.blob_dir / digest[:2] / digest]
    assert list((store.blob_dir / "tmp").glob("*.part")) == []
    with store.binaries.open(second) as file:
        assert file.read() == content


async def test_a_reference_with_a_forged_or_missing_signature_opens_nothing(
    store: Store,
) -> None:
    ref = keep(store, "x.bin", [b"secret bytes"])
    for forged in ({**ref, "sig": "0" * 32}, {**ref, "sig": None}, {**ref, "sig": ref["sig"][:-1]}):
        with pytest.raises(LookupError, match="signature"):
            store.binaries.open(forged)


async def test_a_run_holds_the_blobs_its_values_reference_and_no_other(store: Store) -> None:
    ref = keep(store, "scan.png", [b"\x89PNG\r\n\x1a\n" + b"p" * 100])
    forged = {**keep(store, "other.bin", [b"other"]), "sig": "f" * 32}
    holder = await store.create_run(document=DOCUMENT, trigger={"body": {"file": ref}})
    other = await store.create_run(document=DOCUMENT, trigger={"body": {"file": forged}})
    digest = ref["$ref"][len("blob:") :]
    found = await store.run_blob(holder.id, digest)
    assert found is not None
    path, size, mime = found
    assert (path.read_bytes()[:4], size, mime) == (b"\x89PNG", 108, "image/png")
    assert await store.run_blob(other.id, digest) is None  # another run's blob
    assert await store.run_blob(other.id, forged["$ref"][5:]) is None  # an unsigned reference
    assert await store.run_blob(holder.id, "../" * 20 + "etc/passwd") is None
    # The trigger reads back as it was: the reference, never the bytes.
    assert (await store.get_run(holder.id)).trigger == {"body": {"file": ref}}


async def test_a_reference_inside_a_value_large_enough_to_spill_is_held_too(
    store: Store,
) -> None:
    ref = keep(store, "big.bin", [b"b" * 10])
    outputs = {"output": {"files": [ref], "padding": "x" * 400_000}}
    run = await store.create_run(document=DOCUMENT)
    await store.record_node(run.id, "n1", status="completed", outputs=outputs)
    assert await store.run_blob(run.id, ref["$ref"][5:]) is not None


async def test_blob_writers_racing_for_the_key_sign_alike(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'n.db'}"
    stores = [await Store.open(url, blob_dir=tmp_path / "blobs") for _ in range(2)]
    try:
        refs = await asyncio.gather(
            *(asyncio.to_thread(keep, s, "k.bin", [b"same"]) for s in stores)
        )
        assert refs[0] == refs[1]
        with stores[1].binaries.open(refs[0]) as file:
            assert file.read() == b"same"
    finally:
        for opened in stores:
            await opened.close()
