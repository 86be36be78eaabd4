"""The knowledge nodes in real flows: files -> loader -> chunker -> embedder -> write,
then search (spine) and an Agent's Knowledge Base tool, against the run's data directory
(SQLite with sqlite-vec) and the real local model."""

from __future__ import annotations

from pathlib import Path

import pytest

import nodeloom
from nodeloom.testing.builders import chain, edge, graph, node
from nodeloom.testing.documents import write_documents
from nodeloom.testing.events import of_type


def ingest_graph(sources: list[str], collection: str = "facts", **write: object) -> dict:
    return chain(
        node("load", "document-loader", sources=sources, name="Load"),
        node("chunk", "text-chunker", chunk_size=48, chunk_overlap=8, name="Chunk"),
        node("embed", "embedder", batch_size=4, name="Embed"),
        node("write", "knowledge-write", collection=collection, name="Write", **write),
    )


async def ingest(sources: list[str], **write: object) -> nodeloom.RunResult:
    async with nodeloom.load(ingest_graph(sources, **write)) as flow:
        return await flow.run({})


@pytest.mark.slow
async def test_an_ingest_flow_writes_every_file_and_a_second_run_changes_nothing(
    tmp_path: Path,
) -> None:
    write_documents(tmp_path / "docs")
    sink = nodeloom.ListSink()
    async with nodeloom.load(ingest_graph([str(tmp_path / "docs")])) as flow:
        first = await flow.run({}, sink=sink)
        again = await flow.run({})
    assert first.status is nodeloom.RunStatus.COMPLETED, first.error
    counts = first.outputs["Write"]["output"]
    assert counts["added"] == counts["chunks"] > 7 and counts["collection"] == "facts"
    assert again.outputs["Write"]["output"]["unchanged"] == counts["chunks"]
    assert again.outputs["Embed"]["output"]["model_calls"] == 0, "the cache served every text"
    progress = [e.data for e in of_type(sink.events, "progress", "embed")]
    assert progress[-1] == {"embedded": counts["chunks"], "of": counts["chunks"]}
    assert len(progress) > 2, "progress after each batch"


async def test_the_loader_reports_an_unreadable_file_and_loads_the_others(tmp_path: Path) -> None:
    write_documents(tmp_path)
    (tmp_path / "broken.pdf").write_bytes(b"not a pdf")
    doc = graph(node("load", "document-loader", sources=[str(tmp_path)], name="Load"))
    async with nodeloom.load(doc) as flow:
        result = await flow.run({})
    outputs = result.outputs["Load"]
    assert len(outputs["output"]) == 8
    assert [Path(e["source"]).name for e in outputs["errors"]] == ["broken.pdf"]


async def test_the_loader_fails_when_nothing_loads_or_strictly_on_the_first_failure(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("fine")
    for data in (
        {"sources": [str(tmp_path / "missing.md")]},
        {"sources": [str(tmp_path), str(tmp_path / "x.pdf")], "strict": True},
    ):
        async with nodeloom.load(
            graph(node("load", "document-loader", name="Load", **data))
        ) as flow:
            result = await flow.run({})
        assert result.status is nodeloom.RunStatus.FAILED
        assert result.error["code"] == "knowledge_load_failed"
        assert "'Load'" in result.error["message"]


async def test_a_chat_question_searches_the_collection_and_gets_a_cited_context(
    tmp_path: Path,
) -> None:
    paths = write_documents(tmp_path / "docs")
    assert (await ingest([str(tmp_path / "docs")])).status is nodeloom.RunStatus.COMPLETED
    doc = chain(
        node("start", "chat-start"),
        node("search", "knowledge-search", collection="facts", top_k=3, name="Search"),
    )
    async with nodeloom.load(doc) as flow:
        result = await flow.run("How often is the espresso machine descaled?")
    output = result.outputs["Search"]["output"]
    assert output["hits"][0]["metadata"]["source"] == str(paths["md"])
    assert output["hits"][0]["metadata"]["headings"] == ["Kitchen manual", "Coffee", "Cleaning"]
    assert output["context"].startswith("[1] ") and "[3] " in output["context"]


async def test_writing_with_another_model_fails_naming_both_models(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Some words about herons.")
    assert (await ingest([str(tmp_path)])).status is nodeloom.RunStatus.COMPLETED
    result = await ingest(
        [str(tmp_path)], model="openai-compatible:tiny", base_url="http://127.0.0.1:9/v1"
    )
    # The Embedder node (local) embedded; Write was told another model for plain chunks:
    # the chunks arrive embedded by local, so the write uses local and succeeds.
    assert result.status is nodeloom.RunStatus.COMPLETED
    doc = chain(
        node("load", "document-loader", sources=[str(tmp_path)]),
        node("chunk", "text-chunker"),
        node(
            "write",
            "knowledge-write",
            collection="facts",
            model="openai-compatible:tiny",
            base_url="http://127.0.0.1:9/v1",
            name="Write",
        ),
    )
    async with nodeloom.load(doc) as flow:
        failed = await flow.run({})
    assert failed.status is nodeloom.RunStatus.FAILED
    assert failed.error["code"] == "knowledge_model_mismatch"
    assert "local:all-minilm-l6-v2" in failed.error["message"]
    assert "openai-compatible:tiny" in failed.error["message"]


@pytest.mark.slow
async def test_an_agent_searches_its_knowledge_base_and_its_answer_lists_the_hits(
    mock_llm, tmp_path: Path
) -> None:
    paths = write_documents(tmp_path / "docs")
    assert (await ingest([str(tmp_path / "docs")])).status is nodeloom.RunStatus.COMPLETED
    mock_llm.script(
        [
            {
                "match": {"tools": ["search_facts"], "tool_result": False},
                "tool_calls": [{"name": "search_facts", "arguments": {"query": "chess club"}}],
            },
            {"match": {"tool_result": "search_facts"}, "reply": "They meet on Thursdays [1]."},
        ]
    )
    doc = graph(
        node("start", "chat-start"),
        node("a", "agent", name="Helper"),
        node("kb", "knowledge-base", collection="facts", top_k=2, description="club notes"),
        edge("start", "a"),
        edge("kb", "a", "tools", "tools"),
    )
    sink = nodeloom.ListSink()
    async with nodeloom.load(doc) as flow:
        result = await flow.run("When does the chess club meet?", sink=sink)
    answer = result.outputs["Helper"]["output"]
    assert answer["response"] == "They meet on Thursdays [1]."
    assert answer["sources"][0]["source"] == str(paths["docx"])
    assert [s["n"] for s in answer["sources"]] == [1, 2]
    completed = [
        e.data
        for e in of_type(sink.events, "agent_event", "a")
        if e.data["event"] == "ToolCallCompleted"
    ]
    assert completed[0]["hits"] == answer["sources"]
    tool_message = mock_llm.requests[1].messages[-1]
    assert (
        tool_message["role"] == "tool"
        and "chess club meets on Thursdays" in tool_message["content"]
    )
    assert "club notes" in str(mock_llm.requests[0].body["tools"])


@pytest.mark.parametrize(
    ("node_type", "data", "field"),
    [
        ("text-chunker", {"chunk_size": 10, "chunk_overlap": 10}, "chunk_overlap"),
        ("embedder", {"model": "hub:bert"}, "model"),
        ("knowledge-write", {"collection": "", "model": "local:x"}, "collection"),
        ("knowledge-search", {"collection": "c", "filter": [1]}, "filter"),
        ("knowledge-base", {"collection": "c", "model": "openai-compatible:m"}, "base_url"),
    ],
)
def test_validation_pins_a_bad_parameter_to_its_field(
    node_type: str, data: dict, field: str
) -> None:
    from nodeloom.errors import GraphError

    doc = graph(node("n", node_type, **data))
    with pytest.raises(GraphError) as raised:
        nodeloom.load(doc)
    assert field in {issue.field for issue in raised.value.issues}
