"""The vault: values encrypted at rest, a key from NODELOOM_SECRET_KEY or a key file made
once, atomic 0600 writes, and clear errors for a malformed or wrong key."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from nodeloom.secrets import (
    ENV_SECRET_KEY,
    CredentialNameError,
    SecretKeyError,
    UnknownCredentialError,
    Vault,
    generate_key,
)

VALUE = "sk-live-0123456789"


@pytest.fixture(autouse=True)
def no_key_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_SECRET_KEY, raising=False)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_value_is_encrypted_at_rest_and_read_back(tmp_path: Path):
    vault = Vault(tmp_path)
    vault.set("openai_key", VALUE)
    assert Vault(tmp_path).get("openai_key") == VALUE
    text = (tmp_path / "credentials.json").read_text()
    assert VALUE not in text
    assert "openai_key" in json.loads(text)["credentials"]


def test_the_key_file_and_the_store_are_private_and_the_key_is_made_once(tmp_path: Path):
    vault = Vault(tmp_path)
    vault.set("a", "one")
    key = (tmp_path / "secret.key").read_text()
    vault.set("b", "two")
    assert (tmp_path / "secret.key").read_text() == key
    assert mode(tmp_path / "secret.key") == 0o600
    assert mode(tmp_path / "credentials.json") == 0o600
    assert not list(tmp_path.glob(".*.tmp"))


def test_reading_creates_no_key(tmp_path: Path):
    with pytest.raises(UnknownCredentialError, match="nodeloom credentials set nope"):
        Vault(tmp_path).get("nope")
    assert Vault(tmp_path).names() == []
    assert not (tmp_path / "secret.key").exists()


def test_names_carry_times_never_values(tmp_path: Path):
    vault = Vault(tmp_path)
    first = vault.set("token", "v1")
    second = vault.set("token", "v2")
    assert second.created_at == first.created_at
    assert second.updated_at >= first.updated_at
    assert [info.to_json() for info in vault.names()] == [second.to_json()]
    assert "v2" not in json.dumps(second.to_json())


def test_delete_removes_a_credential(tmp_path: Path):
    vault = Vault(tmp_path)
    vault.set("token", "v")
    assert vault.delete("token") is True
    assert vault.delete("token") is False
    assert "token" not in vault


@pytest.mark.parametrize("name", ["", "1abc", "has-dash", "with space", "x" * 65])
def test_a_name_must_be_usable_in_an_expression(tmp_path: Path, name: str):
    with pytest.raises(CredentialNameError, match="letters, digits and _"):
        Vault(tmp_path).set(name, "v")


def test_the_environment_key_is_used_and_a_malformed_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv(ENV_SECRET_KEY, generate_key())
    Vault(tmp_path).set("token", VALUE)
    assert not (tmp_path / "secret.key").exists()
    assert Vault(tmp_path).get("token") == VALUE
    monkeypatch.setenv(ENV_SECRET_KEY, "not-a-key")
    with pytest.raises(SecretKeyError, match=f"{ENV_SECRET_KEY} is not a valid Fernet key"):
        Vault(tmp_path).get("token")


def test_a_wrong_key_names_the_variable_and_shows_no_ciphertext(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv(ENV_SECRET_KEY, generate_key())
    Vault(tmp_path).set("token", VALUE)
    ciphertext = json.loads((tmp_path / "credentials.json").read_text())["credentials"]["token"]
    monkeypatch.setenv(ENV_SECRET_KEY, generate_key())
    with pytest.raises(SecretKeyError) as caught:
        Vault(tmp_path).get("token")
    message = str(caught.value)
    assert ENV_SECRET_KEY in message and "token" in message
    assert ciphertext["value"] not in message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_rotation_re_encrypts_every_credential_with_the_new_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    old, new = generate_key(), generate_key()
    monkeypatch.setenv(ENV_SECRET_KEY, old)
    vault = Vault(tmp_path)
    vault.set("a", "one")
    vault.set("b", "two")
    assert vault.rotate(new) == 2
    monkeypatch.setenv(ENV_SECRET_KEY, new)
    assert (vault.get("a"), vault.get("b")) == ("one", "two")
    monkeypatch.setenv(ENV_SECRET_KEY, old)
    with pytest.raises(SecretKeyError):
        vault.get("a")
