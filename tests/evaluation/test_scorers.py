"""Each scorer, on the answer shapes flows give: text, objects with a text field, JSON."""

from __future__ import annotations

import pytest

from nodeloom.evaluation import Row, ScorerError, make_scorers


def scored(name: str, expected, answer) -> float:
    (scorer,) = make_scorers((name,))
    import asyncio

    return asyncio.run(scorer.score(Row("1", "q", expected), answer)).value


def test_exact_compares_the_answers_text_ignoring_surrounding_space():
    assert scored("exact", "Paris", {"text": " Paris\n"}) == 1.0
    assert scored("exact", "Paris", "paris") == 0.0


def test_contains_looks_for_the_expected_text_in_the_answer():
    assert scored("contains", "refund", {"response": "Your refund is on its way"}) == 1.0
    assert scored("contains", "refund", "no money back") == 0.0


def test_json_subset_accepts_json_text_and_ignores_extra_keys():
    assert scored("json-subset", '{"category": "billing"}', {"category": "billing", "x": 1}) == 1
    assert scored("json_subset", {"category": "billing"}, '{"category": "other"}') == 0


def test_regex_searches_the_answers_text():
    assert scored("regex", r"^\[billing\]", "[billing] ok") == 1.0
    assert scored("regex", r"^\[billing\]", "[other] ok") == 0.0


def test_numeric_takes_the_first_number_and_a_tolerance():
    assert scored("numeric:0.05", 37.6, "The total is 37.62 EUR") == 1.0
    assert scored("numeric", 37.6, {"total": 37.6}) == 1.0
    assert scored("numeric:0.01", "37.6", 37.7) == 0.0


def test_an_unknown_scorer_lists_the_scorers():
    with pytest.raises(ScorerError, match="unknown scorer 'exactly'; the scorers are exact, "):
        make_scorers(("exactly",))


def test_the_llm_judge_needs_a_model():
    with pytest.raises(ScorerError, match="needs --judge-model"):
        make_scorers(("llm-judge",))
