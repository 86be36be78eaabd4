"""The seed's own catalogue examples (seed 001), each run on the engine as written, with
only what a run needs around it (a state, a tool declaration, a local server, the mock
LLM). Where the original misbehaved (the router example, the loop without `until`), the
test says what a user would expect, and that is what happens."""

from __future__ import annotations

import pytest

HTTP_SEARCH = """
    meta: {{name: search}}
    state:
      shape: {{keywords: str, search_results: list, history: dict}}
      init:
        history: {{queries: [old query]}}
    tools:
      - id: http_fetch
        kind: http
        config: {{allow_private_network: true}}
    graph:
      inputs: [keywords]
      outputs: [search_results]
      nodes:
        - id: search
          type: tool
          uses: http_fetch
          inputs:
            method: GET
            url: "{url}/search"
            params:
              q: "{{{{ state.keywords }}}}"
          map:
            set:
              search_results: "{{{{ result['items'] or [] }}}}"
            merge:
              history:
                queries: ["{{{{ state.keywords }}}}"]
"""


async def test_the_http_search_example_fetches_maps_and_merges(ethan, http_server):
    text = HTTP_SEARCH.format(url=http_server.url)
    result, _ = await ethan.run(text, {"keywords": "lightgbm"})
    assert result.status == "completed", result.error
    assert result.state["search_results"] == ["lightgbm 1", "lightgbm 2"]
    assert result.state["history"] == {"queries": ["old query", "lightgbm"]}
    assert http_server.requests == ["/search?q=lightgbm"]
    assert result.result == {"search_results": ["lightgbm 1", "lightgbm 2"]}
    response = result.outputs["search"]["result"]
    assert response["status"] == 200
    assert response["json"] == {"items": ["lightgbm 1", "lightgbm 2"]}
    assert response["error"] is None


DRAFT = """
    meta:
      name: drafter
      defaults: {llm: "openai:gpt-4o-mini"}
    state:
      shape: {request: str, draft_text: "str | null", prompt_tokens: "int | null"}
    prompts:
      templates:
        respond:
          system: You write short drafts.
          user: "Draft an answer to: {{ state.request }}"
    graph:
      inputs: [request]
      outputs: [draft_text]
      nodes:
        - id: draft
          type: llm
          prompt: respond
          retry:
            max_attempts: 3
            backoff: 1
          timeout:
            seconds: 45
          map:
            set:
              draft_text: "{{ result.text }}"
              prompt_tokens: "{{ result.json['usage']['prompt_tokens'] }}"
"""


async def test_the_llm_draft_example_retries_after_a_provider_error(ethan, mock_llm):
    mock_llm.script(
        [
            {
                "match": {"last_message": "Draft"},
                "error": {"status": 503, "message": "busy"},
                "times": 1,
            },
            {
                "match": {"last_message": "Draft an answer to: refunds"},
                "reply": "Refunds take 5 days.",
            },
        ]
    )
    result, events = await ethan.run(DRAFT, {"request": "refunds"})
    assert result.status == "completed", result.error
    assert result.state["draft_text"] == "Refunds take 5 days."
    assert isinstance(result.state["prompt_tokens"], int) and result.state["prompt_tokens"] > 0
    retries = [e.data["retry"] for e in events if e.event_type == "progress" and "retry" in e.data]
    assert [r["attempt"] for r in retries] == [1]
    assert retries[0]["next_in"] == 1.0
    assert len(mock_llm.requests) == 2
    sent = mock_llm.requests[-1].messages
    assert [m["role"] for m in sent] == ["developer", "user"]  # Agno sends system as developer
    assert result.usage["total_tokens"] > 0


async def test_the_draft_nodes_timeout_and_retry_are_native_settings(ethan, mock_llm):
    node = _node(ethan.load(DRAFT), "draft")
    assert node["data"]["timeout"] == 45
    assert node["data"]["retry"] == {
        "max_attempts": 3,
        "initial_interval": 1.0,
        "backoff_factor": 1.0,
        "max_interval": 1.0,
    }


ROUTER = """
    state:
      shape: {score: float, path: list}
      init: {path: []}
    graph:
      inputs: [score]
      nodes:
        - id: branch
          type: router
          cases:
            - when:
                ">": ["{{ state.score }}", 0.8]
              to: approve
            - when:
                "<": ["{{ state.score }}", 0.5]
              to: reject
          default: refine
        - {id: approve, type: noop, map: {merge: {path: [approve]}}}
        - {id: reject, type: noop, map: {merge: {path: [reject]}}}
        - {id: refine, type: noop, map: {merge: {path: [refine]}}}
"""


@pytest.mark.parametrize(
    ("score", "taken"), [(0.9, ["approve"]), (0.3, ["reject"]), (0.6, ["refine"])]
)
async def test_the_router_example_renders_its_templates_and_routes_on_the_score(
    ethan, score, taken
):
    result, _ = await ethan.run(ROUTER, {"score": score})
    assert result.status == "completed", result.error
    assert result.state["path"] == taken
    assert result.outputs["branch"]["result"] == {"targets": taken}


async def test_every_matching_router_case_fires(ethan):
    text = ROUTER.replace('"<": ["{{ state.score }}", 0.5]', '">": ["{{ state.score }}", 0.1]')
    result, _ = await ethan.run(text, {"score": 0.9})
    assert sorted(result.state["path"]) == ["approve", "reject"]


LOOP = """
    meta:
      defaults: {llm: "openai:gpt-4o-mini"}
    state:
      shape: {score: float, drafts: int}
      init: {score: 0, drafts: 0}
    prompts:
      templates:
        grade: {user: "Grade draft {{ state.drafts }}"}
    graph:
      nodes:
        - id: refine_loop
          type: loop
          body: draft
          until:
            ">": ["{{ state.score }}", 0.75]
          max_iterations: 4
        - id: draft
          type: llm
          prompt: grade
          map:
            set:
              score: "{{ result.json.score }}"
              drafts: "{{ state.drafts + 1 }}"
        - {id: done, type: noop, map: {set: {finished: true}}}
      edges:
        - {from: refine_loop, to: done}
"""


async def test_the_loop_example_repeats_its_body_until_the_condition_holds(ethan, mock_llm):
    mock_llm.script(
        [
            {"match": {"last_message": "Grade draft 0"}, "json": {"score": 0.4}},
            {"match": {"last_message": "Grade draft 1"}, "json": {"score": 0.7}},
            {"match": {"last_message": "Grade draft 2"}, "json": {"score": 0.9}},
        ]
    )
    result, events = await ethan.run(LOOP)
    assert result.status == "completed", result.error
    assert result.state["drafts"] == 3
    assert result.state["score"] == 0.9
    assert result.state["finished"] is True
    body_runs = [
        e for e in events if e.event_type == "completed" and e.node_id == "refine_loop/draft"
    ]
    assert len(body_runs) == 3
    assert "draft" not in result.outputs  # the body runs only inside its loop


SUBGRAPH = """
    meta:
      defaults: {llm: "openai:gpt-4o-mini"}
    state:
      shape: {answer: str, final_summary: "str | null", history: list}
      init: {history: [asked]}
    prompts:
      templates:
        summarize: {user: "Summarize: {{ inputs.text }}"}
    subgraphs:
      summarize:
        inputs: [text]
        outputs: [summary]
        nodes:
          - id: llm
            type: llm
            prompt: summarize
            map:
              set:
                summary: "{{ result.text }}"
              merge:
                history: [summarized]
        edges: []
    graph:
      inputs: [answer]
      outputs: [final_summary]
      nodes:
        - id: summary_step
          type: subgraph
          graph: summarize
          inputs:
            text: "{{ state.answer }}"
          map:
            set:
              final_summary: "{{ output.summary }}"
              from_outputs: "{{ output.outputs.summary }}"
"""


async def test_the_subgraph_example_maps_its_declared_output_back(ethan, mock_llm):
    mock_llm.script([{"match": {"last_message": "Summarize: a long answer"}, "reply": "Short."}])
    result, _ = await ethan.run(SUBGRAPH, {"answer": "a long answer"})
    assert result.status == "completed", result.error
    assert result.state["final_summary"] == "Short."
    assert result.state["from_outputs"] == "Short."
    assert result.state["summary"] == "Short."  # the subgraph's state is merged back
    assert result.state["history"] == ["asked", "summarized"]  # not [asked, asked, summarized]
    assert result.result == {"final_summary": "Short."}
    assert "__ethan__" not in result.state


NOOP = """
    state:
      shape: {draft_text: "str | null", audit: dict}
      init: {draft_text: "temporary", audit: {actions: [start]}}
    graph:
      nodes:
        - id: cleanup
          type: noop
          map:
            delete:
              - draft_text
            merge:
              audit:
                actions: ["cleanup"]
"""


async def test_the_noop_cleanup_example_deletes_and_merges(ethan):
    result, _ = await ethan.run(NOOP)
    assert result.status == "completed", result.error
    assert "draft_text" not in result.state
    assert result.state["audit"] == {"actions": ["start", "cleanup"]}


ON_ERROR = """
    state:
      shape: {path: list}
      init: {path: []}
    tools:
      - id: fetch
        kind: http
        config: {allow_private_network: true}
    graph:
      nodes:
        - id: fetch_page
          type: tool
          uses: fetch
          inputs: {url: "URL/status/500"}
          on_error: ON_ERROR
          map: {merge: {path: [fetched]}}
        - {id: fallback_node, type: noop, map: {merge: {path: [fallback]}}}
        - {id: next, type: noop, map: {merge: {path: [next]}}}
      edges:
        - {from: fetch_page, to: next}
"""


def on_error_graph(url: str, on_error: str) -> str:
    return ON_ERROR.replace("URL", url).replace("ON_ERROR", on_error)


async def test_on_error_to_enqueues_the_fallback_and_skips_the_normal_edges(ethan, http_server):
    text = on_error_graph(http_server.url, "{to: fallback_node}")
    result, events = await ethan.run(text)
    assert result.status == "completed", result.error
    assert result.state["path"] == ["fallback"]
    error = next(e for e in events if e.event_type == "error")
    assert error.node_id == "fetch_page" and error.data["handled"] is True


async def test_on_error_resume_continues_along_the_original_edges(ethan, http_server):
    text = on_error_graph(http_server.url, "{resume: true}")
    result, _ = await ethan.run(text)
    assert result.status == "completed", result.error
    # fallback_node runs too: nothing leads to it here, so it is an entry node
    assert sorted(result.state["path"]) == ["fallback", "next"]
    assert "fetched" not in result.state["path"]  # the failed node's map did not apply


async def test_on_error_to_and_resume_together(ethan, http_server):
    text = on_error_graph(http_server.url, "{to: fallback_node, resume: true}")
    result, _ = await ethan.run(text)
    assert sorted(result.state["path"]) == ["fallback", "next"]


def _node(flow, node_id):
    return next(n for n in flow.graph.to_json()["nodes"] if n["id"] == node_id)
