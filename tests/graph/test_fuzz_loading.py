"""Whatever document arrives, loading it ends in a Flow or a GraphError with located issues:
never another exception (property-based, with hypothesis)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nodeloom
from nodeloom.plugins.registry import default_registry

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)
TYPES = st.sampled_from([*default_registry().types, "nope", ""])
TEXT = st.text(alphabet="ab{}$()'\". _-", max_size=20)
PARAMETER_VALUE = JSON | TEXT | st.just("{{ $json.x }}") | st.just("{{ $('a').item.json }}")


@st.composite
def graphs(draw):
    ids = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=0, max_size=4))
    nodes = [
        {
            "id": node_id,
            "type": draw(TYPES),
            "data": draw(
                st.dictionaries(
                    st.sampled_from(
                        [
                            "name",
                            "template",
                            "value",
                            "mode",
                            "on_error",
                            "retry",
                            "timeout",
                            "cases",
                            "code",
                            "expression",
                            "body",
                            "activation",
                            "field",
                            "operator",
                        ]
                    ),
                    PARAMETER_VALUE,
                    max_size=4,
                )
            ),
        }
        for node_id in ids
    ]
    handles = st.sampled_from(["output", "input", "true", "false", "error", "tools", "x"])
    edges = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "source": st.sampled_from(["a", "b", "c", "d", "z"]),
                    "target": st.sampled_from(["a", "b", "c", "d", "z"]),
                    "sourceHandle": handles,
                    "targetHandle": handles,
                }
            ),
            max_size=5,
        )
    )
    return {"nodes": nodes, "edges": edges}


def load_or_issues(document):
    try:
        nodeloom.load(document)
    except nodeloom.GraphError as exc:
        assert exc.issues, "a GraphError always lists its issues"
        for issue in exc.issues:
            assert issue.code and issue.message


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON)
def test_any_json_value_loads_or_gives_located_issues(document):
    load_or_issues(document if isinstance(document, dict) else {"nodes": document})


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_any_graph_shaped_document_loads_or_gives_located_issues(document):
    load_or_issues(document)
