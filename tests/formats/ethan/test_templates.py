"""Jinja templates in a sandbox: typed single expressions, text otherwise, strict names."""

from __future__ import annotations

import pytest

from nodeloom.formats.ethan import templates
from nodeloom.formats.ethan.templates import TemplateRenderError

SCOPE = {
    "state": {"score": 0.9, "items": ["a", "b"], "name": "Ada"},
    "inputs": {"topic": "ml"},
    "result": {"json": {"usage": {"prompt_tokens": 12}}, "text": " hi "},
    "score": 0.9,
}


def test_a_single_expression_keeps_its_type():
    assert templates.render("{{ state.score }}", SCOPE) == 0.9
    assert templates.render("  {{ state['items'] }} ", SCOPE) == ["a", "b"]
    assert templates.render("{{ result.json['usage']['prompt_tokens'] }}", SCOPE) == 12
    assert templates.render("{{ {'a': 1} }}", SCOPE) == {"a": 1}


def test_several_expressions_render_as_text():
    assert templates.render("{{ state.name }} and {{ inputs.topic }}", SCOPE) == "Ada and ml"
    assert templates.render("score: {{ state.score }}", SCOPE) == "score: 0.9"


def test_a_mapping_key_wins_over_a_method_of_the_same_name():
    assert templates.render("{{ state.items }}", SCOPE) == ["a", "b"]
    assert templates.render("{{ state.get('name') }}", SCOPE) == "Ada"


def test_methods_of_plain_values_still_work():
    assert templates.render("{{ result.text.strip() }}", SCOPE) == "hi"


def test_the_sandbox_blocks_reaching_python_internals():
    with pytest.raises(TemplateRenderError, match="unsafe"):
        templates.render("{{ ''.__class__ }}", SCOPE)
    with pytest.raises(TemplateRenderError, match="unsafe"):
        templates.render("x {{ ''.__class__.__mro__[1].__subclasses__() }}", SCOPE)


def test_a_template_cannot_change_the_state():
    state = {"history": ["a"]}
    with pytest.raises(TemplateRenderError, match="unsafe"):
        templates.render("{{ state.history.append('b') }}", {"state": state})
    assert state == {"history": ["a"]}


@pytest.mark.parametrize("source", ["{{ missing }}", "{{ state.nope }}", "text {{ state.nope }}"])
def test_a_missing_name_is_an_error_never_an_empty_value(source):
    with pytest.raises(TemplateRenderError, match=r"undefined|nope|missing"):
        templates.render(source, SCOPE)


def test_default_gives_an_optional_value():
    assert templates.render("{{ state.nope | default([]) }}", SCOPE) == []


def test_render_value_walks_dicts_and_lists():
    value = {"q": "{{ inputs.topic }}", "list": ["{{ state.score }}", 3], "n": 1}
    assert templates.render_value(value, SCOPE) == {"q": "ml", "list": [0.9, 3], "n": 1}


def test_a_block_template_renders_as_text():
    source = "{% for i in state['items'] %}- {{ i }}\n{% endfor %}"
    assert templates.render(source, SCOPE) == "- a\n- b\n"


def test_check_reports_a_syntax_error():
    assert templates.check("{{ a }") is not None
    assert templates.check("{{ a }} {{ b }}") is None


def test_partials_expand_recursively_and_cycles_are_refused():
    partials = {"system/base": "Base. {{> tone }}", "tone": "Be brief."}
    assert templates.expand_partials("{{> system/base }} Go.", partials) == "Base. Be brief. Go."
    with pytest.raises(KeyError):
        templates.expand_partials("{{> nope }}", partials)
    with pytest.raises(ValueError, match="cycle"):
        templates.expand_partials("{{> a }}", {"a": "{{> b }}", "b": "{{> a }}"})
