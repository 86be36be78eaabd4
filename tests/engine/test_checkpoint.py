"""The engine's checkpoint helpers: the input hash a resumed run matches records by (it
must stay what runs recorded before computed) and the JSON copy of parameters."""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace
from typing import Any

from nodeloom.engine.checkpoint import input_hash, json_safe
from nodeloom.values import DataValue, json_default

INPUTS: dict[str, Any] = {"input": {"b": [1, 2.5, None], "a": "é\\n", "n": True}}
DATA: dict[str, Any] = {"z": {"y": 1, "x": DataValue("data", 2)}, "text": "hi"}


def test_the_input_hash_is_the_sha256_of_sorted_compact_json_as_recorded_before():
    node: Any = SimpleNamespace(type="set")
    text = json.dumps(
        ["set", INPUTS, DATA],
        sort_keys=True,
        separators=(",", ":"),
        default=json_default,
        ensure_ascii=False,
    )
    assert input_hash(node, INPUTS, DATA) == hashlib.sha256(text.encode()).hexdigest()


def test_inputs_that_are_not_json_have_no_hash_and_no_json_copy():
    node: Any = SimpleNamespace(type="set")
    circular: dict[str, Any] = {}
    circular["self"] = circular
    assert input_hash(node, {"input": circular}, {}) is None
    assert json_safe({"value": circular}) is None
    assert input_hash(node, {"input": {1j: 1}}, {}) is None  # a key JSON cannot have


def test_the_json_copy_of_parameters_holds_plain_values():
    copy = json_safe(DATA)
    assert copy == json.loads(json.dumps(DATA, default=json_default))
    assert copy is not None and copy["z"] is not DATA["z"]
