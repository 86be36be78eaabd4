"""`{{ $credentials.name }}` resolves from the run's vault, lazily, and every value a run
used is replaced by "***" in its events and results."""

from __future__ import annotations

from pathlib import Path

import pytest

import nodeloom
from nodeloom.engine.events import ListSink
from nodeloom.engine.redaction import MASK, Redactor
from nodeloom.plugins.contract import Services
from nodeloom.secrets import ENV_SECRET_KEY, Vault
from nodeloom.testing.builders import chain, node

SECRET = "tok-5f3a9e1c"


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
    return vault


def template_flow(template: str, vault: Vault) -> nodeloom.Flow:
    document = chain(
        node("start", "chat-start"), node("t", "prompt-template", name="T", template=template)
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
    vault: CountingVault,
):
    sink = ListSink()
    result = await template_flow("Bearer {{ $credentials.token }}", vault).run("hi", sink=sink)
    assert result.status is nodeloom.RunStatus.COMPLETED
    assert vault.read == ["token"]
    assert result.outputs["T"] == {"output": {"text": f"Bearer {MASK}"}}
    seen = repr([event.to_json() for event in sink.events])
    assert SECRET not in seen and f"Bearer {MASK}" in seen


async def test_an_unknown_credential_fails_the_node_naming_it_and_how_to_add_it(
    vault: CountingVault,
):
    result = await template_flow("{{ $credentials.missing }}", vault).run("hi")
    assert result.status is nodeloom.RunStatus.FAILED
    assert result.error is not None and result.error["code"] == "expression_eval"
    message = result.error["message"]
    assert "$credentials.missing" in message
    assert "nodeloom credentials set missing" in message
    assert "PUT /api/credentials/missing" in message


async def test_an_error_message_carrying_the_value_is_masked(vault: CountingVault):
    result = await template_flow("{{ $credentials.token + 1 }}", vault).run("hi")
    assert result.status is nodeloom.RunStatus.FAILED
    assert SECRET not in repr(result.error)
