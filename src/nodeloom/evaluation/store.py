"""Evaluations kept as JSON files, one per evaluation, in `<data dir>/evaluations/`
(docs/testing.md#where-evaluations-are-kept)."""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

from nodeloom.paths import data_dir

FORMAT = 1


class EvaluationNotFound(Exception):
    """No evaluation has this id, id prefix or version: the message lists what there is."""


def folder() -> Path:
    return data_dir() / "evaluations"


def new_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def save(record: dict[str, Any]) -> Path:
    """Write the evaluation atomically (a temporary file renamed into place)."""
    target = folder() / f"{record['id']}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".json.partial")
    partial.write_text(json.dumps({"format": FORMAT, **record}, indent=1, default=str), "utf-8")
    os.replace(partial, target)
    return target


def load_all() -> list[dict[str, Any]]:
    """Every stored evaluation, oldest first."""
    records = []
    for path in sorted(folder().glob("*.json")):
        try:
            records.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue  # a file being written by another process, or not ours
    return sorted(records, key=lambda r: str(r.get("created_at", "")))


def find(ref: str) -> dict[str, Any]:
    """An evaluation by id, id prefix, flow version (`sha-…` or the graph's `version`), or
    `FLOW@VERSION` (the flow's name); the newest one when several fit."""
    records = load_all()
    exact = [r for r in records if r["id"] == ref]
    prefixed = [r for r in records if r["id"].startswith(ref)]
    if len(prefixed) > 1 and not exact:
        ids = ", ".join(r["id"] for r in prefixed)
        raise EvaluationNotFound(f"{ref!r} is the start of several evaluation ids: {ids}")
    flow_name, at, version = ref.rpartition("@")
    fits = (
        exact
        or prefixed
        or [
            r
            for r in records
            if r["flow"]["version"] == (version if at else ref)
            and (not at or r["flow"].get("name") == flow_name)
        ]
    )
    if not fits:
        known = ", ".join(f"{r['id']} ({r['flow']['version']})" for r in records[-10:])
        raise EvaluationNotFound(
            f"no evaluation is {ref!r} (an id, an id prefix, a version or FLOW@VERSION); "
            + (f"the newest are: {known}" if known else "none is stored yet: run nodeloom eval")
        )
    return fits[-1]
