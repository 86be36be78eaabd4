"""`{{ $credentials.name }}` resolves from the run's vault, lazily, only in secret-capable
parameters; every value a run used (and what a secret parameter rendered from it) is
replaced by "***" in its events and results, across streamed tokens too."""

from __future__ import annotations

from pathlib import Path

import pytest

import nodeloom
from nodeloom.engine.events import ListSink
from nodeloom.engine.redaction import MASK, Redactor, TokenStreams
from nodeloom.errors import GraphError
from nodeloom.plugins.contract import Services
from nodeloom.secrets import ENV_SECRET_KEY, Vault
from nodeloom.testing.builders import chain, node
from nodeloom.testing.mock_llm import MockLLM

SECRET = "tok-5f3a9e1c"
SPLIT = "tok-77aa bb31"  # the mock LLM streams word by word: two tokens


class CountingVault(Vault):
    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.read: list[str] = []

    def get(self, name: str) -> str:
        self.read.append(name)
        return super().get(name)


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CountingVault:
    monkeypatch.delenv(ENV_SECRET_KEY, raising=False)
    vault = CountingVault(tmp_path)
    vault.set("token", SECRET)
    vault.set("unused", "never-read")
    vault.set("spaced", SPLIT)
    return vault


def model_flow(vault: Vault, llm: MockLLM, api_key: str) -> nodeloom.Flow:
    document = chain(
        node("start", "chat-start"),
        node(
            "llm",
            "llm-completion",
            name="LLM",
            prompt="{{ $json.message }}",
            model="openai-compatible:mock",
            base_url=llm.base_url,
            api_key=api_key,
        ),
    )
    flow = nodeloom.load(document)
    flow.services = Services(vault.folder, vault.folder / "s.db", credentials=vault)
    return flow


def test_the_redactor_masks_inside_strings_keys_and_nested_values():
    redactor = Redactor()
    assert redactor.redact({"a": "abc"}) == {"a": "abc"}
    redactor.add("abc")
    redactor.add("abcdef")
    assert redactor.redact({"abc": ["x abcdef y", ("abc",), 3, None]}) == {
        MASK: [f"x {MASK} y", [MASK], 3, None]
    }


async def test_a_credential_resolves_lazily_and_is_masked_in_events_and_results(
    vault: CountingVault, mock_llm: MockLLM
):
    mock_llm.script({"api_key": SECRET, "default": {"reply": f"your key: {SECRET}"}})
    sink = ListSink()
    flow = model_flow(vault, mock_llm, "{{ $credentials.token }}")
    result = await flow.run("hi", sink=sink)
    assert result.status is nodeloom.RunStatus.COMPLETED, result.error
    assert vault.read == ["token"]  # and the model got it: the script requires it
    assert result.outputs["LLM"]["output"]["text"] == f"your key: {MASK}"
    seen = repr([event.to_json() for event in sink.events])
    assert SECRET not in seen and f"your key: {MASK}" in seen


async def test_a_credential_streamed_in_two_tokens_is_masked_in_the_token_events(
    vault: CountingVault, mock_llm: MockLLM
):
    mock_llm.script({"default": {"reply": f"here: {SPLIT} done"}})
    sink = ListSink()
    result = await model_flow(vault, mock_llm, "{{ $credentials.spaced }}").run("hi", sink=sink)
    assert result.status is nodeloom.RunStatus.COMPLETED, result.error
    tokens = [e.data["token"] for e in sink.events if e.event_type == "progress"]
    assert len(tokens) > 2
    assert "".join(tokens) == f"here: {MASK} done"
    assert not any(part in token for token in tokens for part in SPLIT.split())
    assert [e.seq for e in sink.events] == list(range(1, len(sink.events) + 1))


async def test_an_unknown_credential_fails_the_node_naming_it_and_how_to_add_it(
    vault: CountingVault, mock_llm: MockLLM
):
    result = await model_flow(vault, mock_llm, "{{ $credentials.missing }}").run("hi")
    assert result.status is nodeloom.RunStatus.FAILED
    assert result.error is not None and result.error["code"] == "expression_eval"
    message = result.error["message"]
    assert "$credentials.missing" in message
    assert "nodeloom credentials set missing" in message
    assert "PUT /api/credentials/missing" in message
    assert mock_llm.requests == []


async def test_an_error_message_carrying_the_value_is_masked(
    vault: CountingVault, mock_llm: MockLLM
):
    result = await model_flow(vault, mock_llm, "{{ $credentials.token + 1 }}").run("hi")
    assert result.status is nodeloom.RunStatus.FAILED
    assert SECRET not in repr(result.error)


def test_a_credential_outside_a_secret_capable_parameter_does_not_load():
    document = chain(
        node("start", "chat-start"),
        node("t", "prompt-template", name="T", template="{{ upper($credentials.token) }}"),
    )
    with pytest.raises(GraphError) as refused:
        nodeloom.load(document)
    [issue] = refused.value.issues
    assert (issue.code, issue.node_id, issue.field) == ("credential_placement", "t", "template")
    assert "'T'" in issue.message or "(T)" in issue.message
    assert "HTTP Request's `headers`" in issue.message


def test_token_streams_hold_back_only_what_could_begin_a_secret():
    redactor = Redactor()
    redactor.add("abcdef")
    streams = TokenStreams(redactor)
    released = [
        streams.release("progress", {"token": token}, "n") for token in ("xx ab", "cd", "ef!")
    ]
    assert released == [
        [("progress", {"token": "xx "})],
        [],  # "abcd" could still be the secret
        [("progress", {"token": f"{MASK}!"})],
    ]
    assert streams.release("progress", {"token": "q abc"}, "n") == [("progress", {"token": "q "})]
    assert streams.release("progress", {"token": "zz"}, "other") == [
        ("progress", {"token": "zz"})
    ]  # each node's stream apart
    assert streams.release("completed", {"x": 1}, "n") == [
        ("progress", {"token": "abc"}),  # the stream ended without the secret: let it go
        ("completed", {"x": 1}),
    ]
