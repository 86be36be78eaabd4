"""Model references and providers: parsing, configuration checks, Agno classes."""

import pytest

from nodeloom.models import (
    ModelConfigError,
    check_configured,
    create_model,
    parse_reference,
    with_overrides,
)


def test_a_reference_is_provider_colon_model():
    spec = parse_reference("openai:gpt-4o-mini")
    assert (spec.provider, spec.model, spec.reference) == (
        "openai",
        "gpt-4o-mini",
        "openai:gpt-4o-mini",
    )


def test_a_model_selector_wire_object_carries_a_base_url():
    spec = parse_reference({"model": "openai-compatible:qwen", "base_url": "http://h/v1"})
    assert spec.base_url == "http://h/v1" and spec.public() == {
        "model": "openai-compatible:qwen",
        "base_url": "http://h/v1",
    }


@pytest.mark.parametrize(
    "value, message",
    [
        ("gpt-4o", "names no provider; write 'provider:model', for example 'openai:gpt-4o'"),
        ("antropic:claude", "did you mean 'anthropic'?"),
        ("", "a model is written 'provider:model'"),
        (None, "a model is written 'provider:model'"),
    ],
)
def test_malformed_references_say_how_to_write_one(value, message):
    with pytest.raises(ModelConfigError) as caught:
        parse_reference(value, where="'Node'")
    assert message in str(caught.value) and str(caught.value).startswith("'Node'")


def test_a_missing_key_names_the_environment_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ModelConfigError, match="set OPENAI_API_KEY"):
        check_configured(parse_reference("openai:gpt-4o-mini"))


def test_a_key_on_the_node_satisfies_the_check(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    spec = with_overrides(parse_reference("openai:gpt-4o-mini"), api_key="sk-node")
    check_configured(spec)
    assert create_model(spec).api_key == "sk-node"


def test_openai_compatible_needs_a_base_url(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ModelConfigError, match="needs a base URL"):
        check_configured(parse_reference("openai-compatible:llama"))
    model = create_model(
        with_overrides(parse_reference("openai-compatible:llama"), base_url="http://127.0.0.1:1/v1")
    )
    assert type(model).__name__ == "OpenAILike" and model.base_url == "http://127.0.0.1:1/v1"


def test_each_provider_resolves_to_its_agno_class(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:11434")
    classes = {
        ref: type(create_model(parse_reference(ref))).__name__
        for ref in ("openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5", "ollama:llama3.2")
    }
    assert classes == {
        "openai:gpt-4o-mini": "OpenAIChat",
        "anthropic:claude-sonnet-4-5": "Claude",
        "ollama:llama3.2": "Ollama",
    }


def test_the_environment_base_url_and_node_overrides_apply(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.test/v1")
    assert create_model(parse_reference("openai:m")).base_url == "http://env.test/v1"
    spec = with_overrides(
        parse_reference("openai:m"),
        base_url="http://node.test/v1",
        api_key="node-key",  # another endpoint: the environment's key is not sent there
        temperature=0.3,
        max_tokens=9,
    )
    model = create_model(spec)
    assert (model.base_url, model.temperature, model.max_tokens) == ("http://node.test/v1", 0.3, 9)
    assert model.api_key == "node-key"


def test_anthropic_takes_its_base_url_through_its_client_parameters(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    spec = with_overrides(
        parse_reference("anthropic:claude-sonnet-4-5"), base_url="http://proxy.test", api_key="p"
    )
    assert create_model(spec).client_params == {"base_url": "http://proxy.test"}
