"""Signed decision links: only this vault's key makes one; any change breaks it."""

from __future__ import annotations

import time

import pytest

from nodeloom.secrets.links import LinkError, read_decision, sign_decision


def test_a_link_reads_back_what_was_signed(tmp_path) -> None:
    token = sign_decision(
        tmp_path, run_id="r1", node_id="ask", wait="w1", decision="reject", expires=2e9
    )
    link = read_decision(tmp_path, token)
    assert (link.run_id, link.node_id, link.wait, link.decision) == ("r1", "ask", "w1", "reject")
    assert not link.expired(time.time())
    assert link.expired(2e9)


def test_a_link_signed_with_another_key_or_altered_is_refused(tmp_path) -> None:
    token = sign_decision(
        tmp_path / "a", run_id="r1", node_id="ask", wait="w1", decision="reject", expires=2e9
    )
    with pytest.raises(LinkError, match="not made by this server"):
        read_decision(tmp_path / "b", token)
    other = sign_decision(
        tmp_path / "a", run_id="r1", node_id="ask", wait="w1", decision="approve", expires=2e9
    )
    swapped = other.split(".")[0] + "." + token.split(".")[1]  # approve's body, reject's MAC
    with pytest.raises(LinkError):
        read_decision(tmp_path / "a", swapped)
    for broken in ("", "abc", "abc.", ".abc", "a.b.c"):
        with pytest.raises(LinkError):
            read_decision(tmp_path / "a", broken)
