"""The view of a thread a model is sent: sound for chat APIs even when `data_in_slice` cut a
tool call from its results."""

from __future__ import annotations

from nodeloom.formats.plan.messages import assistant, to_model, tool_result, user


def wire(messages) -> list[tuple[str, str, list[str]]]:
    return [(m.role, m.content, [c["id"] for c in m.tool_calls or []]) for m in to_model(messages)]


def test_a_call_followed_by_its_results_is_sent_as_is():
    thread = [
        user("q"),
        assistant("", [{"id": "c1", "name": "lookup", "arguments": {"term": "x"}}]),
        tool_result("c1", "lookup", "def x"),
        assistant("answer"),
    ]

    sent = to_model(thread)

    assert wire(thread) == [
        ("user", "q", []),
        ("assistant", "", ["c1"]),
        ("tool", "def x", []),
        ("assistant", "answer", []),
    ]
    assert sent[1].tool_calls[0]["function"] == {"name": "lookup", "arguments": '{"term": "x"}'}
    assert sent[2].tool_call_id == "c1"


def test_a_tool_result_without_its_call_is_sent_as_a_user_message():
    assert wire([tool_result("c9", "get_a", '{"a": 1}')]) == [
        ("user", "Result of tool 'get_a': {\"a\": 1}", [])
    ]


def test_a_call_without_its_result_is_sent_as_text():
    thread = [assistant("thinking", [{"id": "c1", "name": "lookup", "arguments": {"t": 1}}])]

    assert wire(thread) == [("assistant", "thinking\n[called tool 'lookup' with {\"t\": 1}]", [])]


def test_only_the_answered_calls_are_kept_and_their_results_come_first():
    thread = [
        assistant(
            "",
            [
                {"id": "c1", "name": "a", "arguments": {}},
                {"id": "c2", "name": "b", "arguments": {}},
            ],
        ),
        tool_result("other", "z", "stray"),
        tool_result("c2", "b", "B"),
    ]

    assert wire(thread) == [
        ("assistant", "[called tool 'a' with {}]", ["c2"]),
        ("tool", "B", []),
        ("user", "Result of tool 'z': stray", []),
    ]
