"""Seed 002's log entries of an approval, through the server: a workflow file saved and run
over HTTP logs `wait_input` when its approval pauses, and `input_received` (with the note)
once it is answered with `POST /api/runs/{id}/resume`, each once."""

from __future__ import annotations

import httpx

from nodeloom.formats.workflow import logs

from .conftest import read_frames
from .test_runs import save, wait_for

WORKFLOW = {
    "nodes": [
        {"id": "start", "type": "start", "x": 0, "y": 0, "data": {"initialInput": "ship it"}},
        {"id": "ok", "type": "input", "x": 200, "y": 0, "data": {}},
    ],
    "connections": [{"source": "start", "target": "ok"}],
}


def entries(api: httpx.Client, run_id: str) -> list[tuple[str, str, str]]:
    frames = read_frames(api, f"/api/runs/{run_id}/events")
    return [(e["nodeId"], e["type"], e["content"]) for e in logs(f.data for f in frames)]


def test_an_approval_logs_wait_input_when_it_pauses_and_input_received_when_answered(
    api: httpx.Client,
):
    run_id = api.post(f"/api/flows/{save(api, WORKFLOW)}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "paused")
    assert entries(api, run_id)[-2:] == [
        ("ok", "step_start", "approval node"),
        ("ok", "wait_input", "Waiting for user approval"),
    ]

    answer = {"decision": "approve", "note": "fine"}
    resumed = api.post(f"/api/runs/{run_id}/resume", json={"answers": {"ok": answer}})
    assert resumed.status_code == 202, resumed.text
    wait_for(api, run_id, "completed")
    assert [entry for entry in entries(api, run_id) if entry[0] == "ok"] == [
        ("ok", "step_start", "approval node"),
        ("ok", "wait_input", "Waiting for user approval"),
        ("ok", "input_received", "User approved this step. Feedback: fine"),
    ]
