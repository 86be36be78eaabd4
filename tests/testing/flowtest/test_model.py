"""Reading a flow test file: every problem listed with where it is."""

from __future__ import annotations

import pytest

from nodeloom.testing.flowtest import FlowTestError, load_flowtest


def load_text(tmp_path, text: str):
    path = tmp_path / "x.flowtest.yaml"
    path.write_text(text, encoding="utf-8")
    return load_flowtest(path)


def test_every_problem_is_listed_with_its_location_and_the_tests_name(tmp_path):
    with pytest.raises(FlowTestError) as caught:
        load_text(
            tmp_path,
            "flow: f.json\ntests:\n"
            "  - name: first\n    expect: {status: done}\n"
            "  - name: second\n    expcet: {}\n",
        )
    message = str(caught.value)
    assert "tests[0] ('first').expect.status: Input should be 'completed'" in message
    assert "tests[1] ('second').expcet: Extra inputs are not permitted" in message


def test_two_tests_with_one_name_are_refused(tmp_path):
    with pytest.raises(FlowTestError, match="two tests are named 'same'"):
        load_text(tmp_path, "flow: f.json\ntests: [{name: same}, {name: same}]\n")


def test_a_file_without_tests_is_refused(tmp_path):
    with pytest.raises(FlowTestError, match="tests: List should have at least 1 item"):
        load_text(tmp_path, "flow: f.json\ntests: []\n")


def test_paths_are_read_relative_to_the_test_file(tmp_path):
    loaded = load_text(tmp_path, "flow: f.json\nmock_llm: m.yaml\ntests: [{name: a}]\n")
    assert loaded.flow_path == (tmp_path / "f.json").resolve()
    assert loaded.script_for(loaded.tests[0]) == str((tmp_path / "m.yaml").resolve())


def test_a_bare_event_type_is_short_for_a_pattern_with_only_a_type(tmp_path):
    loaded = load_text(tmp_path, "flow: f.json\ntests: [{name: a, expect: {events: [x]}}]\n")
    assert loaded.tests[0].expect.events[0].type == "x"
    assert loaded.tests[0].expect.status == "completed"


def test_the_documented_flow_test_file_is_valid(tmp_path):
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[3] / "docs" / "testing.md"
    blocks = re.findall(r"^```yaml\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M)
    (block,) = [b for b in blocks if b.startswith("flow:")]
    loaded = load_text(tmp_path, block)
    assert loaded.tests[0].name == "a refund question is answered by the billing reply"
    assert loaded.tests[0].expect.outputs["Answer"] == {
        "output": {"text": {"$regex": "^\\[billing\\] "}}
    }
