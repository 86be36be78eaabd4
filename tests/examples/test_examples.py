"""Every example in examples/ runs with `nodeloom run`, offline: a flow with LLM nodes uses
the mock script stored beside it (`<name>.mock.yaml`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.json"))
MESSAGES = {
    "support-router": "My app crashes when I open it",
    "invoice-extraction": "Invoice ACME Tools: 2 hammers at 12.50, 3 boxes of nails at 4.20",
    "concierge": "Plan me a day in Lima",
    "ask-the-docs": "Is shipping free?",
}
# Flows an example needs to have run first (in the same data directory).
PREPARE = {"ask-the-docs": ROOT / "examples" / "knowledge" / "ingest-docs.json"}


def run_example(path: Path, message: str) -> subprocess.CompletedProcess[str]:
    command = [
        str(Path(sys.executable).parent / "nodeloom"),
        "run",
        str(path),
        "--json",
        "--input",
        message,
    ]
    script = path.with_suffix(".mock.yaml")
    if script.exists():
        command += ["--mock-llm", str(script)]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=ROOT, env={**os.environ}
    )


@pytest.mark.e2e
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_the_example_runs_to_completion(path):
    if path.stem in PREPARE:
        prepared = run_example(PREPARE[path.stem], "")
        assert prepared.returncode == 0, prepared.stdout[-2000:] + prepared.stderr[-2000:]
    done = run_example(path, MESSAGES.get(path.stem, "I want a refund for this purchase"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["status"] == "completed"


@pytest.mark.e2e
def test_the_support_router_answers_on_the_branch_its_classifier_chose():
    done = run_example(ROOT / "examples" / "support-router.json", "I was charged twice, refund?")
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["outputs"]["Triage"]["category"]["category"] == "billing"
    assert result["outputs"]["Answer"]["output"]["text"].startswith("[billing] ")
    assert "Technical reply" not in result["outputs"]
    assert result["usage"]["total_tokens"] > 0


@pytest.mark.e2e
def test_the_invoice_example_totals_the_extracted_lines():
    done = run_example(
        ROOT / "examples" / "invoice-extraction.json", MESSAGES["invoice-extraction"]
    )
    result = json.loads(done.stdout.splitlines()[-1])
    lines = result["outputs"]["Extract"]["output"]["lines"]
    expected = round(sum(line["quantity"] * line["unit_price"] for line in lines), 2)
    assert result["outputs"]["Total"]["output"]["total"] == expected


@pytest.mark.e2e
def test_the_concierge_uses_its_mcp_server_and_its_sub_agent():
    done = run_example(ROOT / "examples" / "concierge.json", MESSAGES["concierge"])
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    tools = [
        e["data"]["tool"]
        for e in lines
        if e.get("event_type") == "agent_event" and e["data"]["event"] == "ToolCallStarted"
    ]
    assert tools == ["city_facts", "delegate_task_to_member"]
    response = lines[-1]["outputs"]["Concierge"]["output"]["response"]
    assert "Peru" in response and "Miraflores" in response


def test_every_example_has_a_flow_test_beside_it():
    """`pytest` collects examples/*.flowtest.yaml (testpaths), so CI runs them."""
    missing = [p.name for p in EXAMPLES if not p.with_suffix(".flowtest.yaml").exists()]
    assert missing == []


@pytest.mark.e2e
@pytest.mark.slow
def test_the_support_router_evaluates_over_its_20_row_dataset_offline():
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "nodeloom"),
            *("eval", "examples/support-router.json", "examples/support-router.eval.jsonl"),
            *("--scorer", "contains", "--json"),
            *("--mock-llm", "examples/support-router.mock.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(done.stdout)
    assert record["dataset"]["rows"] == 20
    # The mock's classifier rules miss three phrasings ("billed", "freezes", "payment").
    assert record["summary"] == {"contains": 0.85}


@pytest.mark.e2e
@pytest.mark.slow
def test_nodeloom_test_passes_every_example_flow_test_and_writes_junit(tmp_path):
    import xml.etree.ElementTree as ET

    report = tmp_path / "junit.xml"
    done = subprocess.run(
        [str(Path(sys.executable).parent / "nodeloom"), "test", "examples", "--junit", str(report)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stdout[-3000:]
    suites = ET.parse(report).getroot()
    assert suites.get("failures") == "0" and suites.get("errors") == "0"
    assert {s.get("name") for s in suites} == {f"examples/{p.stem}.flowtest.yaml" for p in EXAMPLES}


@pytest.mark.e2e
def test_ask_the_docs_answers_from_the_ingested_documents_with_a_citation():
    ingest = ROOT / "examples" / "knowledge" / "ingest-docs.json"
    first = json.loads(run_example(ingest, "").stdout.splitlines()[-1])
    written = first["outputs"]["Write"]["output"]
    assert written["added"] == written["chunks"] > 12 and written["collection"] == "orbit"
    again = json.loads(run_example(ingest, "").stdout.splitlines()[-1])
    assert again["outputs"]["Write"]["output"]["unchanged"] == written["chunks"]
    done = run_example(ROOT / "examples" / "ask-the-docs.json", "Is shipping free?")
    result = json.loads(done.stdout.splitlines()[-1])
    hits = result["outputs"]["Search docs"]["output"]["hits"]
    assert hits[0]["metadata"]["source"].endswith("shipping.md")
    answer = result["outputs"]["Answer"]["output"]["text"]
    assert "45 dollars" in answer and "[1]" in answer
