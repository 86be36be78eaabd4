"""Running a flow over rows: concurrency, the answer scored, failed runs."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import nodeloom
from nodeloom.evaluation import Row, Score, evaluate, flow_version, read_dataset
from nodeloom.testing.builders import chain, node


@dataclass
class CountingScorer:
    """Scores 1 after a pause, noting how many rows were in flight at once."""

    name: str = "counting"
    in_flight: int = 0
    most: int = 0
    seen: list = field(default_factory=list)

    async def score(self, row, answer):
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        await asyncio.sleep(0.05)
        self.in_flight -= 1
        self.seen.append(answer)
        return Score(1.0)


def shout():
    return nodeloom.load(
        chain(
            node("start", "chat-start"),
            node("up", "json-transform", name="Up", expression="$uppercase(message)"),
        )
    )


async def test_rows_run_concurrently_up_to_the_limit_and_results_keep_row_order():
    scorer = CountingScorer()
    rows = tuple(Row(str(i), f"w{i}") for i in range(8))
    results = await evaluate(shout(), rows, [scorer], concurrency=3)
    assert scorer.most == 3
    assert [r.answer for r in results] == [f"W{i}" for i in range(8)]
    assert all(r.scores["counting"].value == 1.0 for r in results)


async def test_a_failed_run_scores_zero_and_says_why():
    flow = nodeloom.load(
        chain(
            node("start", "chat-start"),
            node(
                "boom",
                "code",
                name="Boom",
                code="def main(input, nodes):\n    raise ValueError('no')\n",
            ),
        )
    )
    (result,) = await evaluate(flow, (Row("1", "x", "y"),), [CountingScorer()])
    assert result.status == "failed"
    assert result.scores["counting"].value == 0.0
    assert result.scores["counting"].reason.startswith("the run failed: node 'Boom'")


def test_the_version_is_the_graphs_own_or_a_hash_that_changes_with_the_flow():
    assert flow_version(nodeloom.load({**chain(node("s", "chat-start")), "version": 3})) == "3"
    one, other = shout(), nodeloom.load(chain(node("start", "chat-start")))
    assert flow_version(one).startswith("sha-") and flow_version(one) != flow_version(other)
    assert flow_version(one) == flow_version(shout())


def test_a_csv_dataset_reads_expected_as_json_when_it_is_json(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('id,input,expected,note\na,hi,"{""x"": 1}",n\nb,yo,plain,\n', encoding="utf-8")
    dataset = read_dataset(path)
    assert [(r.id, r.input, r.expected) for r in dataset.rows] == [
        ("a", "hi", {"x": 1}),
        ("b", "yo", "plain"),
    ]
    assert dataset.rows[0].extra == {"note": "n"}


def test_a_row_without_input_is_named_with_its_line(tmp_path):
    import pytest

    from nodeloom.evaluation import DatasetError

    path = tmp_path / "d.jsonl"
    path.write_text('{"input": "a"}\n\n{"question": "b"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"d.jsonl:3: no `input` \(it has: question\)"):
        read_dataset(path)
