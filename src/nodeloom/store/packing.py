"""JSON for the store's columns, with large values moved to blobs.

A *unit* is one value the store may move out of its row: a port value of a node's inputs
or outputs, a top-level field of an event's `data` (a port value of `data.outputs`), a
run's trigger, settings, usage or error. A unit whose compact JSON is longer than the
threshold is written to the blob directory and replaced in the row by a `BinaryRef`:

    {"$ref": "blob:<sha256>", "mime": "application/json", "size": <bytes>}

The same value in a node's outputs, the `completed` event and the next node's inputs is
therefore one file, however many rows point at it. Values larger than STREAM_ABOVE are
encoded piece by piece straight into the blob file and never exist as one string.

Blob references are the store's, never a user's. Where a reference may stand (a unit, or
a mapping the layout descends into), an object with a `"$ref"` key is always one the store
wrote: a value of the run's that has such a key (a webhook body, a Code node's result
shaped like a reference, a file `BinaryRef`) is stored wrapped,

    {"$ref": "literal", "value": <the value>}

and unwrapped, unresolved, when read. A reference resolves only if its digest is 64 hex
digits (so its file lies inside the blob folder, which `BlobDir.path` checks again).
Inside a blob nothing is resolved: its content is the unit's value as it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from nodeloom.store.binary import claimed_digest
from nodeloom.store.blobs import DIGEST, BlobDir, BlobInfo
from nodeloom.values import BinaryRef, DataValue, json_default, json_encoder

JSON_MIME = "application/json"
REF_PREFIX = "blob:"
REF_KEY = "$ref"
LITERAL = "literal"  # the `$ref` of a wrapped value (see the module docstring)
_REF_MARK = '"$ref":'  # in a column's text: a reference or a wrapped value may be there
_BLOB_MARK = '"$ref":"blob:'  # ... a blob reference may be there
_SIG_MARK = '"sig":'  # ... a signed binary one (nodeloom.store.binary) may be there

DEFAULT_THRESHOLD = 256 * 1024
STREAM_ABOVE = 4 * 1024 * 1024  # larger values are never held as one JSON string
_PIECE = 1 << 16

# Where the units are: None = the value is one unit; a mapping = descend into a dict,
# key -> layout ("*" for any other key).
Layout = Mapping[str, Any] | None
UNIT: Layout = None
PORTS: Layout = {"*": UNIT}
EVENT_DATA: Layout = {"outputs": PORTS, "inputs": PORTS, "*": UNIT}


def _default(obj: Any) -> Any:
    try:
        return json_default(obj)
    except TypeError:
        return repr(obj)  # never fail a run's bookkeeping on an odd value


# Compact JSON, the store's column format: its encoder built once (nodeloom.values); a
# circular value raises RecursionError, and the estimate sends such a value to `pack`.
dumps = json_encoder(_default)


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


@dataclass
class Packed:
    """A column's JSON text and the blobs it references."""

    text: str | None
    blobs: list[BlobInfo] = field(default_factory=list)


class Packer:
    """Turns values into column text (spilling units over `threshold` to `blobs`), and
    back."""

    def __init__(self, blobs: BlobDir, threshold: int = DEFAULT_THRESHOLD) -> None:
        self.blobs = blobs
        self.threshold = threshold

    def quick(self, value: Any, layout: Layout = UNIT) -> str | None:
        """The column text if `value` is small enough to need no blob (the common case,
        cheap enough for the event loop); None means: call `pack` (in a thread)."""
        if estimate(value, self.threshold) > self.threshold:
            return None
        text = dumps(value)
        if _REF_MARK in text:
            if _BLOB_MARK in text and _SIG_MARK in text:
                return None  # may hold a signed binary reference: `pack` records it
            text = dumps(escape(value, layout))
        return text if len(text) <= self.threshold else None

    def pack(self, value: Any, layout: Layout = UNIT) -> Packed:
        """Column text for `value`, every unit over the threshold written as a blob."""
        if value is None:
            return Packed(None)
        blobs: list[BlobInfo] = []
        return Packed(self._pack(value, layout, blobs), blobs)

    def binary_refs(self, value: Any) -> list[BlobInfo]:
        """The binary blob references this store signed that `value` holds, anywhere in
        it (docs/files.md): the run that stores the value holds those blobs."""
        found: list[BlobInfo] = []
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, DataValue):
                stack.append(item.value)
            elif isinstance(item, dict):
                digest = claimed_digest(item)
                if digest is not None:
                    if self.blobs.signed(digest, item.get("sig")):
                        mime = item.get("mime") if isinstance(item.get("mime"), str) else ""
                        found.append(BlobInfo(digest, int(item.get("size") or 0), mime))
                else:
                    stack.extend(item.values())
            elif isinstance(item, (list, tuple)):
                stack.extend(item)
        return found

    def _pack(self, value: Any, layout: Layout, blobs: list[BlobInfo]) -> str:
        if claims_ref(value):
            layout = UNIT  # wrapped whole (or written whole to a blob, unwrapped)
        raw = None  # the value's own JSON (what a blob holds: never wrapped)
        if estimate(value, self.threshold) <= self.threshold:
            raw = dumps(value)
            text = dumps(escape(value, layout)) if _REF_MARK in raw else raw
            if len(text) <= self.threshold:
                if _BLOB_MARK in raw and _SIG_MARK in raw:
                    blobs.extend(self.binary_refs(value))
                return text
        if layout is not None and isinstance(value, dict):
            parts = []
            for key, item in value.items():
                inner = layout.get(key, layout.get("*")) if isinstance(key, str) else UNIT
                parts.append(f"{_key(key)}:{self._pack(item, inner, blobs)}")
            return "{" + ",".join(parts) + "}"
        if raw is None and estimate(value, STREAM_ABOVE) <= STREAM_ABOVE:
            raw = dumps(value)
        info = self.blobs.write_text(raw) if raw is not None else self._stream(value)
        blobs.append(info)
        if raw is None or (_BLOB_MARK in raw and _SIG_MARK in raw):  # held inside the blob
            blobs.extend(self.binary_refs(value))
        return dumps(BinaryRef(REF_PREFIX + info.sha256, JSON_MIME, info.size).to_json())

    def _stream(self, value: Any) -> BlobInfo:
        return self.blobs.write_chunks(iter_json(value))

    def unpack(self, text: str | None, layout: Layout = UNIT) -> Any:
        """The value of a column, every blob reference replaced by its value."""
        if text is None:
            return None
        return self.resolve(json.loads(text), layout)

    def resolve(self, value: Any, layout: Layout = UNIT) -> Any:
        if isinstance(value, dict) and REF_KEY in value:
            if value[REF_KEY] == LITERAL and len(value) == 2 and "value" in value:
                return value["value"]
            sha256 = blob_sha(value)
            # Anything else is a row written before values were wrapped: plain data.
            return value if sha256 is None else self.blobs.load(sha256)
        if layout is not None and isinstance(value, dict):
            return {
                key: self.resolve(item, layout.get(key, layout.get("*")))
                for key, item in value.items()
            }
        return value


def blob_sha(value: Any) -> str | None:
    """The sha256 of a store blob reference (64 lowercase hex digits), else None."""
    if (
        isinstance(value, dict)
        and len(value) == 3
        and value.get("mime") == JSON_MIME
        and isinstance(ref := value.get(REF_KEY), str)
        and ref.startswith(REF_PREFIX)
        and DIGEST.fullmatch(ref, len(REF_PREFIX))
        and isinstance(value.get("size"), int)
    ):
        return ref[len(REF_PREFIX) :]
    return None


def claims_ref(value: Any) -> bool:
    """Whether a value would read as a store reference: an object with a `$ref` key (a
    `BinaryRef` is written as one). Such a value of a run's is stored wrapped."""
    if isinstance(value, DataValue):
        value = value.value
    return isinstance(value, BinaryRef) or (isinstance(value, dict) and REF_KEY in value)


def escape(value: Any, layout: Layout = UNIT) -> Any:
    """`value` with every object that claims to be a reference, where a reference may
    stand (see `Layout`), wrapped as `{"$ref": "literal", "value": ...}`."""
    if claims_ref(value):
        return {REF_KEY: LITERAL, "value": value}
    if isinstance(value, DataValue):
        return escape(value.value, layout)
    if layout is not None and isinstance(value, dict):
        return {
            key: escape(item, layout.get(key, layout.get("*")) if isinstance(key, str) else UNIT)
            for key, item in value.items()
        }
    return value


def has_refs(text: str | None) -> bool:
    """Whether a column's text may hold a blob reference or a wrapped value (cheap
    pre-check: without one, `json.loads` alone reads it)."""
    return text is not None and _REF_MARK in text


def estimate(value: Any, budget: int) -> int:
    """Roughly the length of `value`'s JSON, walking no further once past `budget`."""
    return _size(value, budget, _FAST_DEPTH)


_FAST_DEPTH = 64  # nesting the recursive walk follows before handing over to `_walk`


def _size(value: Any, budget: int, depth: int) -> int:
    """`estimate` for the plain JSON types, recursively (the common case, about twice as
    fast as `_walk`); anything else, or deeper nesting, goes to `_walk`."""
    kind = type(value)
    if kind is str:
        return len(value) + 2
    if kind is int:
        return value.bit_length() // 3 + 1
    if kind is float:
        return 12
    if value is None or kind is bool:
        return 5
    if depth and kind is dict:
        total = 2 + 2 * len(value)
        for key, item in value.items():
            if total > budget:
                break
            total += len(key) + 2 if type(key) is str else _walk(key, budget)
            total += _size(item, budget - total, depth - 1)
        return total
    if depth and (kind is list or kind is tuple):
        total = 2 + len(value)
        for item in value:
            if total > budget:
                break
            total += _size(item, budget - total, depth - 1)
        return total
    return _walk(value, budget)


def _walk(value: Any, budget: int) -> int:
    """`estimate` for any value and nesting, without recursion."""
    total = 0
    stack: list[Iterator[Any]] = [iter((value,))]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
        elif isinstance(item, str):
            total += len(item) + 2
        elif item is None or isinstance(item, bool):
            total += 5
        elif isinstance(item, int):
            total += item.bit_length() // 3 + 1
        elif isinstance(item, float):
            total += 12
        elif isinstance(item, dict):
            total += 2 + 2 * len(item)
            stack.append(iter(item.values()))
            stack.append(iter(item.keys()))
        elif isinstance(item, (list, tuple)):
            total += 2 + len(item)
            stack.append(iter(item))
        else:
            stack.append(iter((_default(item),)))
        if total > budget:
            return total
    return total


_END = object()


def iter_json(value: Any) -> Iterator[str]:
    """`dumps(value)` in pieces: long strings are cut, small subtrees encoded at C speed."""
    if isinstance(value, str):
        if len(value) <= _PIECE:
            yield dumps(value)
            return
        yield '"'
        for start in range(0, len(value), _PIECE):
            yield dumps(value[start : start + _PIECE])[1:-1]
        yield '"'
    elif isinstance(value, dict):
        if estimate(value, _PIECE) <= _PIECE:
            yield dumps(value)
            return
        yield "{"
        for number, (key, item) in enumerate(value.items()):
            yield f",{_key(key)}:" if number else f"{_key(key)}:"
            yield from iter_json(item)
        yield "}"
    elif isinstance(value, (list, tuple)):
        if estimate(value, _PIECE) <= _PIECE:
            yield dumps(value)
            return
        yield "["
        start, step = 0, 16
        while start < len(value):
            part = value[start : start + step]
            small = estimate(part, _PIECE) <= _PIECE
            if not small and step > 1:
                step //= 2  # a large item in this run: take fewer at a time
                continue
            if start:
                yield ","
            if small:  # many items at C speed
                yield dumps(part)[1:-1]
                step = min(step * 2, 4096)
            else:
                yield from iter_json(part[0])
            start += len(part)
        yield "]"
    elif value is None or isinstance(value, (bool, int, float)):
        yield dumps(value)
    else:
        yield from iter_json(_default(value))


def _key(key: Any) -> str:
    """A dict key as JSON writes it (non-string keys as json.dumps converts them)."""
    if isinstance(key, str):
        return dumps(key)
    return dumps({key: None})[1:-6]
