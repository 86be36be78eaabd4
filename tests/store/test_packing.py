"""Column JSON: compact text, large units moved to blobs, references resolved back."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from nodeloom.store import packing
from nodeloom.store.blobs import BlobDir
from nodeloom.store.errors import NotFoundError
from nodeloom.store.packing import EVENT_DATA, PORTS, Packer, dumps, estimate, iter_json
from nodeloom.values import BinaryRef, DataValue

VALUES = [
    None,
    0,
    -12345678901234567890,
    1.5,
    True,
    'é\n"quoted"',
    [],
    {},
    {1: "int key", "k": [1, 2, {"deep": None}]},
    ["x" * 100_000, 1, ["y" * 70_000] * 3, {"a": "z" * 70_000}],
    list(range(50_000)),
    {str(n): "v" * n for n in range(400)},
    ("a", "tuple"),
    {"ref": BinaryRef("file:a.png", "image/png", 3), "value": DataValue("data", 1)},
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_streamed_json_is_exactly_the_one_shot_json(value):
    assert "".join(iter_json(value)) == dumps(value)


@pytest.mark.parametrize("value", [*VALUES, float("nan"), object()], ids=range(len(VALUES) + 2))
def test_the_column_json_is_what_the_json_module_writes(value):
    # dumps keeps one C encoder rather than building one per call: same text.
    expected = json.JSONEncoder(
        ensure_ascii=False, separators=(",", ":"), default=packing._default
    ).encode(value)
    assert dumps(value) == expected


def test_a_circular_value_fails_to_encode_rather_than_looping():
    value: dict[str, Any] = {}
    value["self"] = value
    with pytest.raises(RecursionError):
        dumps(value)


def test_the_estimate_stops_walking_once_past_the_budget():
    huge = [{"text": "x" * 100}] * 2_000_000
    started = time.perf_counter()
    assert estimate(huge, 1_000) > 1_000
    assert time.perf_counter() - started < 0.05


def packer(tmp_path: Path, threshold: int = 100) -> Packer:
    return Packer(BlobDir(tmp_path), threshold)


def test_only_the_ports_over_the_threshold_become_blobs(tmp_path: Path):
    packed = packer(tmp_path).pack({"big": "b" * 500, "small": "s"}, PORTS)
    assert len(packed.blobs) == 1
    assert (
        packed.text is not None and '"small":"s"' in packed.text and '"$ref":"blob:' in packed.text
    )
    assert packer(tmp_path).unpack(packed.text, PORTS) == {"big": "b" * 500, "small": "s"}


def test_an_events_outputs_spill_port_by_port(tmp_path: Path):
    data = {"outputs": {"a": "a" * 500, "b": 2}, "duration_ms": 3}
    packed = packer(tmp_path).pack(data, EVENT_DATA)
    assert len(packed.blobs) == 1 and '"b":2' in (packed.text or "")
    assert packer(tmp_path).unpack(packed.text, EVENT_DATA) == data


def test_a_node_s_own_file_reference_is_not_mistaken_for_a_blob(tmp_path: Path):
    own = {"$ref": "file:report.pdf", "mime": "application/pdf", "size": 9}
    packed = packer(tmp_path, threshold=10_000).pack({"output": own}, PORTS)
    assert packer(tmp_path).unpack(packed.text, PORTS) == {"output": own}


def test_small_values_are_packed_without_touching_the_blob_directory(tmp_path: Path):
    blobs = tmp_path / "never"
    assert Packer(BlobDir(blobs), 1_000).quick({"a": 1}) == '{"a":1}'
    assert not blobs.exists()


def forged(digest: str) -> dict[str, Any]:
    return {"$ref": f"blob:{digest}", "mime": "application/json", "size": 1}


@pytest.mark.parametrize("small", [True, False], ids=["in the row", "spilled"])
@pytest.mark.parametrize("layout", [PORTS, EVENT_DATA], ids=["ports", "event data"])
def test_a_value_shaped_like_a_blob_ref_is_read_back_as_the_same_plain_value(
    tmp_path: Path, small: bool, layout: Any
):
    stored = packer(tmp_path, threshold=10_000 if small else 100)
    real = packer(tmp_path).pack({"output": "r" * 500}, PORTS)  # a blob the store did write
    (info,) = real.blobs
    look_alikes = {
        "copy": forged(info.sha256),  # another value's blob: never read through a copy
        "path": forged("/" * 40 + "etc/passwd".rjust(24, "/")),
        "wrapper": {"$ref": "literal", "value": forged(info.sha256)},
        "file": BinaryRef("file:a.png", "image/png", 3),
        "pad": "p" * (1 if small else 20_000),
    }
    value = {"outputs": look_alikes} if layout is EVENT_DATA else look_alikes
    if layout is EVENT_DATA:
        value.update(forged(info.sha256))  # event data that is itself shaped like a ref
    text = stored.quick(value, layout) if small else stored.pack(value, layout).text
    assert text is not None
    expected = json.loads(dumps(value))
    assert stored.unpack(text, layout) == expected


def test_a_blob_digest_must_be_64_hex_digits_inside_the_blob_folder(tmp_path: Path):
    outside = tmp_path / "secret.json"
    outside.write_text('"host file"')
    folder = BlobDir(tmp_path / "blobs")
    for digest in (str(outside).rjust(64, "/"), "../" * 21 + "x", "A" * 64, "a" * 63):
        with pytest.raises(NotFoundError, match="not a blob digest"):
            folder.load(digest)
    raw = "{" + f'"output":{dumps(forged(str(outside).rjust(64, "/")))}' + "}"
    assert Packer(folder).unpack(raw, PORTS) == {"output": forged(str(outside).rjust(64, "/"))}
