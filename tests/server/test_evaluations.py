"""GET /api/evaluations: what `nodeloom eval` stored, through the real server."""

from __future__ import annotations

import json
import subprocess

from nodeloom.testing.builders import chain, node

from .conftest import nodeloom_executable


def test_the_server_lists_the_stored_evaluations_and_shows_one_with_its_rows(server, api, tmp_path):
    flow = chain(
        node("start", "chat-start"),
        node("up", "json-transform", name="Up", expression="$uppercase(message)"),
    )
    (tmp_path / "flow.json").write_text(json.dumps({**flow, "name": "Upper"}))
    (tmp_path / "rows.jsonl").write_text(
        '{"input": "a", "expected": "A"}\n{"input": "b", "expected": "c"}\n'
    )
    done = subprocess.run(
        [
            nodeloom_executable(),
            "eval",
            str(tmp_path / "flow.json"),
            str(tmp_path / "rows.jsonl"),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=server.env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    stored = json.loads(done.stdout)

    listed = api.get("/api/evaluations").json()["evaluations"]
    assert [e["id"] for e in listed][:1] == [stored["id"]]
    assert listed[0]["summary"] == {"exact": 0.5} and "rows" not in listed[0]
    assert listed[0]["flow"]["name"] == "Upper"

    one = api.get(f"/api/evaluations/{stored['id']}").json()
    assert [(r["id"], r["answer"], r["scores"]["exact"]["score"]) for r in one["rows"]] == [
        ("1", "A", 1.0),
        ("2", "B", 0.0),
    ]
    missing = api.get("/api/evaluations/nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
