"""`nodeloom eval` as a user runs it: a 20-row dataset over two versions of a flow, stored
and compared row by row; the LLM judge through the mock LLM; bad input."""

from __future__ import annotations

import json

import pytest

from nodeloom.testing.builders import chain, node

WORDS = [
    *("Refund", "Crash", "Hello", "Invoice", "Bug", "Thanks", "Error", "Charge", "Login", "Help"),
    *("Billing", "Update", "Price", "Slow", "Card", "Reset", "Order", "Ship", "Cancel", "Mail"),
]


def shaper(expression: str) -> dict:
    return {
        **chain(
            node("start", "chat-start"),
            node("shape", "json-transform", name="Shape", expression=expression),
        ),
        "name": "Shaper",
    }


@pytest.fixture
def versions(tmp_path):
    """Version 1 shouts, version 2 whispers; 15 of the 20 rows expect a whisper."""
    rows = [
        {"id": f"r{i + 1}", "input": w, "expected": w.upper() if i % 4 == 0 else w.lower()}
        for i, w in enumerate(WORDS)
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "v1.json").write_text(json.dumps(shaper("$uppercase(message)")))
    (tmp_path / "v2.json").write_text(json.dumps(shaper("$lowercase(message)")))
    return tmp_path


@pytest.mark.slow
def test_two_versions_over_20_rows_are_stored_and_compared_row_by_row(nodeloom, versions, data_dir):
    first = nodeloom("eval", str(versions / "v1.json"), str(versions / "rows.jsonl"), "--json")
    second = nodeloom(
        "eval",
        str(versions / "v2.json"),
        str(versions / "rows.jsonl"),
        "--scorer",
        "exact",
        "--json",
    )
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert a["summary"] == {"exact": 0.25} and b["summary"] == {"exact": 0.75}
    assert a["flow"]["name"] == b["flow"]["name"] == "Shaper"
    assert a["flow"]["version"] != b["flow"]["version"]
    assert len(a["rows"]) == 20 and a["rows"][1]["answer"] == "CRASH"
    assert (data_dir / "evaluations" / f"{a['id']}.json").exists()

    compared = nodeloom("eval", "compare", a["flow"]["version"], b["id"], "--json")
    assert compared.returncode == 0, compared.stderr
    report = json.loads(compared.stdout)
    assert report["tally"] == {"better": 15, "worse": 5, "same": 0, "unpaired": 0}
    row = report["rows"][1]
    assert (row["id"], row["a"]["answer"], row["b"]["answer"]) == ("r2", "CRASH", "crash")

    shown = nodeloom("eval", "compare", a["id"], b["id"])
    assert "exact: A 0.25 → B 0.75" in shown.stdout
    assert "B is better on 15 rows, worse on 5, the same on 0" in shown.stdout
    assert a["id"] in nodeloom("eval", "list").stdout


@pytest.mark.slow
def test_the_llm_judge_grades_with_its_rubric_through_the_mock_llm(nodeloom, tmp_path):
    flow = chain(
        node("start", "chat-start"),
        node(
            "reply",
            "llm-completion",
            name="Reply",
            model="openai:gpt-4o-mini",
            prompt="{{ $json.message }}",
        ),
    )
    (tmp_path / "flow.json").write_text(json.dumps(flow))
    (tmp_path / "rows.jsonl").write_text(
        '{"input": "hi", "expected": "a greeting"}\n{"input": "bye"}\n'
    )
    (tmp_path / "mock.yaml").write_text(
        "rules:\n"
        "  - match: {system: Grade politeness, last_message: {contains: 'Input:\n\nhi'}}\n"
        "    json: {score: 1, reason: polite}\n"
        "  - match: {system: Grade politeness}\n"
        "    json: {score: 0.5, reason: curt}\n"
        "  - reply: Hello there\n"
    )
    done = nodeloom(
        "eval",
        str(tmp_path / "flow.json"),
        str(tmp_path / "rows.jsonl"),
        "--scorer",
        "llm-judge",
        "--judge-model",
        "openai:gpt-4o-mini",
        "--rubric",
        "Grade politeness.",
        "--mock-llm",
        str(tmp_path / "mock.yaml"),
        "--json",
        "--min-score",
        "0.8",
    )
    assert done.returncode == 1, done.stderr  # the mean, 0.75, is below --min-score
    record = json.loads(done.stdout)
    scores = [row["scores"]["llm-judge"] for row in record["rows"]]
    assert scores == [{"score": 1.0, "reason": "polite"}, {"score": 0.5, "reason": "curt"}]
    assert record["rows"][0]["answer"]["text"] == "Hello there"
    assert record["scorers"] == [
        {"model": "openai:gpt-4o-mini", "rubric": "Grade politeness.", "name": "llm-judge"}
    ]


def test_bad_input_exits_2_and_says_what_is_wrong(nodeloom, versions):
    flow, rows = str(versions / "v1.json"), str(versions / "rows.jsonl")
    unknown = nodeloom("eval", flow, rows, "--scorer", "exactly")
    assert unknown.returncode == 2 and "unknown scorer 'exactly'" in unknown.stderr
    (versions / "bad.csv").write_text("question,expected\nhi,there\n")
    bad = nodeloom("eval", flow, str(versions / "bad.csv"))
    assert (
        bad.returncode == 2 and "bad.csv:2: no `input` (it has: question, expected)" in bad.stderr
    )
    missing = nodeloom("eval", "compare", "nothing", "else")
    assert missing.returncode == 2 and "no evaluation is 'nothing'" in missing.stderr
