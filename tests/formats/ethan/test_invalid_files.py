"""Invalid Ethan files are refused before anything runs, with every problem located by its
path in the file (and the node's id, inside a node)."""

from __future__ import annotations

import pytest

from nodeloom.errors import GraphError

VALID = """
    meta:
      defaults: {llm: "openai:gpt-4o-mini"}
    state:
      shape: {question: str, answer: "str | null"}
    prompts:
      partials:
        tone: Be brief.
      templates:
        respond: {system: "{{> tone }}", user: "{{ state.question }}"}
    tools:
      - {id: echo, kind: python, impl: "tools.py#echo"}
    graph:
      inputs: [question]
      nodes:
        - id: ask
          type: llm
          prompt: respond
          map: {set: {answer: "{{ result.text }}"}}
        - id: check
          type: tool
          uses: echo
          inputs: {text: "{{ state.answer }}"}
      edges:
        - {from: ask, to: check}
"""


def issues_of(ethan, text: str) -> list:
    (ethan.folder / "tools.py").write_text("def echo(text):\n    return text\n")
    with pytest.raises(GraphError) as caught:
        ethan.load(text)
    return caught.value.issues


def only(issues: list, code: str):
    found = [issue for issue in issues if issue.code == code]
    assert len(found) == 1, [str(i) for i in issues]
    return found[0]


def test_the_valid_file_loads(ethan):
    (ethan.folder / "tools.py").write_text("def echo(text):\n    return text\n")
    flow = ethan.load(VALID)
    assert {n.type for n in flow.graph.nodes} == {"ethan-start", "ethan-llm", "ethan-tool"}


def test_an_unknown_field_is_located_with_a_did_you_mean(ethan):
    issue = only(issues_of(ethan, VALID.replace("uses: echo", "use: echo")), "unknown_field")
    assert issue.field == "graph.nodes[1].use"
    assert issue.node_id == "check"
    assert "did you mean 'uses'?" in issue.message


def test_an_unknown_top_level_section_is_reported(ethan):
    issue = only(issues_of(ethan, VALID + "    prompt: {}\n"), "unknown_field")
    assert issue.field == "prompt"
    assert "did you mean 'prompts'?" in issue.message


def test_a_wrong_field_type_is_located(ethan):
    text = VALID.replace('map: {set: {answer: "{{ result.text }}"}}', "map: {set: answer}")
    issue = only(issues_of(ethan, text), "invalid_graph")
    assert issue.field == "graph.nodes[0].map.set"
    assert issue.node_id == "ask"
    assert "valid dictionary" in issue.message and "got a string 'answer'" in issue.message


def test_a_number_written_as_text_is_a_wrong_type(ethan):
    text = """
        graph:
          nodes:
            - {id: again, type: loop, body: work, max_iterations: "3"}
            - {id: work, type: noop, map: {set: {a: 1}}}
    """
    issue = only(issues_of(ethan, text), "invalid_graph")
    assert issue.field == "graph.nodes[0].max_iterations"


def test_an_unknown_node_type_is_located(ethan):
    issue = only(issues_of(ethan, VALID.replace("type: tool", "type: tol")), "unknown_node_type")
    assert issue.field == "graph.nodes[1].type"
    assert "did you mean 'tool'?" in issue.message


@pytest.mark.parametrize(
    ("change", "field", "name"),
    [
        (("uses: echo", "uses: ecko"), "graph.nodes[1].uses", "tool 'ecko'"),
        (("prompt: respond", "prompt: reply"), "graph.nodes[0].prompt", "prompt 'reply'"),
        (("{{> tone }}", "{{> voice }}"), "prompts.templates.respond.system", "partial 'voice'"),
    ],
)
def test_unknown_references_are_located(ethan, change, field, name):
    issue = only(issues_of(ethan, VALID.replace(*change)), "unknown_reference")
    assert issue.field == field
    assert f"there is no {name}" in issue.message


def test_an_unknown_subgraph_is_located(ethan):
    text = """
        graph:
          nodes:
            - {id: sub, type: subgraph, graph: summarise}
        subgraphs:
          summarize: {nodes: [{id: a, type: noop, map: {set: {x: 1}}}]}
    """
    issue = only(issues_of(ethan, text), "unknown_reference")
    assert issue.field == "graph.nodes[0].graph"
    assert "did you mean 'summarize'?" in issue.message


def test_edges_and_router_targets_must_name_nodes(ethan):
    text = """
        graph:
          nodes:
            - id: branch
              type: router
              cases: [{when: {"==": [1, 1]}, to: nowhere}]
            - {id: a, type: noop, map: {set: {x: 1}}}
          edges:
            - {from: a, to: b}
    """
    issues = issues_of(ethan, text)
    assert only(issues, "unknown_reference").field == "graph.nodes[0].cases[0].to"
    assert only(issues, "dangling_edge").field == "graph.edges[0].to"


def test_a_cycle_of_plain_edges_is_refused(ethan):
    text = """
        graph:
          nodes:
            - {id: start, type: noop, map: {set: {x: 1}}}
            - {id: a, type: noop, map: {set: {x: 1}}}
            - {id: b, type: noop, map: {set: {x: 1}}}
          edges:
            - {from: start, to: a}
            - {from: a, to: b}
            - {from: b, to: a}
    """
    issue = only(issues_of(ethan, text), "cycle")
    assert issue.field == "graph.edges"
    assert "'a' -> 'b' -> 'a'" in issue.message


def test_a_cycle_with_a_conditional_edge_or_through_a_router_is_allowed(ethan):
    conditional = """
        graph:
          nodes:
            - {id: start, type: noop, map: {set: {n: 0}}}
            - {id: a, type: noop, map: {set: {n: "{{ state.n + 1 }}"}}}
          edges:
            - {from: start, to: a}
            - {from: a, to: a, when: {"<": [{var: state.n}, 3]}}
    """
    ethan.load(conditional)
    router = """
        graph:
          nodes:
            - {id: start, type: noop, map: {set: {n: 0}}}
            - {id: a, type: noop, map: {set: {n: "{{ state.n + 1 }}"}}}
            - id: again
              type: router
              cases: [{when: {"<": [{var: state.n}, 3]}, to: a}]
          edges:
            - {from: start, to: a}
            - {from: a, to: again}
    """
    ethan.load(router)


def test_a_graph_without_an_entry_node_is_refused(ethan):
    text = """
        graph:
          nodes:
            - {id: a, type: noop, map: {set: {x: 1}}}
            - {id: b, type: noop, map: {set: {x: 1}}}
          edges:
            - {from: a, to: b, when: {"==": [1, 1]}}
            - {from: b, to: a, when: {"==": [1, 1]}}
    """
    issue = only(issues_of(ethan, text), "invalid_graph")
    assert issue.field == "graph.nodes" and "no entry node" in issue.message


def test_llm_nodes_need_a_model(ethan):
    issue = only(
        issues_of(ethan, VALID.replace('defaults: {llm: "openai:gpt-4o-mini"}', "name: x")),
        "invalid_graph",
    )
    assert issue.field == "meta.defaults.llm"


def test_an_unsupported_provider_is_located(ethan):
    text = VALID.replace(
        'defaults: {llm: "openai:gpt-4o-mini"}',
        'defaults: {llm: "g:gemini-pro"}\n      providers: {g: {type: gemini}}',
    )
    issue = only(issues_of(ethan, text), "unsupported_feature")
    assert issue.field == "meta.providers.g.type"


def test_state_init_keys_must_be_in_the_shape_and_fit_it(ethan):
    text = VALID.replace(
        'shape: {question: str, answer: "str | null"}',
        'shape: {question: str, answer: "str | null", count: int, tags: "lisst[str]"}\n'
        "      init: {count: many, extra: 1}",
    )
    issues = issues_of(ethan, text)
    fields = {issue.field: issue.message for issue in issues}
    assert "unknown type 'lisst'" in fields["state.shape.tags"]
    assert fields["state.init.count"] == "expected int, got a string"
    assert "not in state.shape" in fields["state.init.extra"]


def test_an_unknown_jsonlogic_operation_is_located(ethan):
    text = VALID.replace(
        "- {from: ask, to: check}", '- {from: ask, to: check, when: {"=~": [1, 1]}}'
    )
    issue = only(issues_of(ethan, text), "invalid_condition")
    assert issue.field == "graph.edges[0].when"
    assert "unknown JsonLogic operation '=~'" in issue.message


def test_a_template_that_does_not_compile_is_located(ethan):
    text = VALID.replace('{text: "{{ state.answer }}"}', '{text: "{{ state.answer }"}')
    issue = only(issues_of(ethan, text), "invalid_template")
    assert issue.field == "graph.nodes[1].inputs.text"
    assert issue.node_id == "check"


def test_a_python_tool_file_must_exist_next_to_the_yaml(ethan):
    issue = only(
        issues_of(ethan, VALID.replace("tools.py#echo", "missing.py#echo")), "unknown_reference"
    )
    assert issue.field == "tools[0].impl"
    assert str(ethan.folder / "missing.py") in issue.message


def test_a_malformed_function_reference_is_located(ethan):
    issue = only(issues_of(ethan, VALID.replace("tools.py#echo", "tools.py")), "invalid_graph")
    assert issue.field == "tools[0].impl"


def test_duplicate_node_ids_are_located(ethan):
    text = """
        graph:
          nodes:
            - {id: a, type: noop, map: {set: {x: 1}}}
            - {id: a, type: noop, map: {set: {x: 2}}}
    """
    issue = only(issues_of(ethan, text), "duplicate_node_id")
    assert issue.field == "graph.nodes[1].id"


def test_unsupported_features_are_refused_not_ignored(ethan):
    text = (
        VALID
        + """
    memory: {enabled: true, kind: inmemory}
    """
    )
    text = text.replace(
        '- {id: echo, kind: python, impl: "tools.py#echo"}',
        '- {id: echo, kind: python, impl: "tools.py#echo"}\n'
        '      - {id: lc, kind: langchain, mode: class, impl: "x.py#T"}',
    )
    issues = [i for i in issues_of(ethan, text) if i.code == "unsupported_feature"]
    assert {i.field for i in issues} == {"memory.enabled", "tools[1].kind"}


def test_the_bookkeeping_key_is_reserved(ethan):
    text = VALID.replace("{set: {answer:", "{set: {__ethan__:")
    issue = only(issues_of(ethan, text), "invalid_graph")
    assert issue.field == "graph.nodes[0].map.set.__ethan__"


def test_every_problem_is_reported_at_once(ethan):
    text = (
        VALID.replace("uses: echo", "uses: ecko")
        .replace("prompt: respond", "prompt: reply")
        .replace("to: check}", "to: chek}")
    )
    codes = sorted(issue.code for issue in issues_of(ethan, text))
    assert codes == ["dangling_edge", "unknown_reference", "unknown_reference"]


def test_a_loop_cannot_be_its_own_body(ethan):
    text = """
        graph:
          nodes:
            - {id: start, type: noop, map: {set: {x: 1}}}
            - {id: again, type: loop, body: again}
          edges:
            - {from: start, to: again}
    """
    issue = only(issues_of(ethan, text), "cycle")
    assert issue.field == "graph.nodes[1].body"


def test_ids_the_converter_needs_are_refused(ethan):
    text = """
        graph:
          nodes:
            - {id: a/b, type: noop, map: {set: {x: 1}}}
            - {id: __start__, type: noop, map: {set: {x: 1}}}
    """
    issues = issues_of(ethan, text)
    assert {i.field for i in issues} == {"graph.nodes[0].id", "graph.nodes[1].id"}


def test_an_empty_graph_is_refused(ethan):
    issue = only(issues_of(ethan, "meta: {name: empty}\ngraph: {nodes: []}"), "invalid_graph")
    assert issue.field == "graph.nodes" and "no nodes" in issue.message
