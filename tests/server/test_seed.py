"""`nodeloom serve --flows`: graph files saved as flows at start-up, once."""

from __future__ import annotations

import json
from pathlib import Path

from nodeloom.plugins.registry import default_registry
from nodeloom.server.seed import import_flows
from nodeloom.store import Store
from nodeloom.testing.builders import chain, node


def write(path: Path, template: str) -> None:
    document = chain(node("start", "chat-start"), node("t", "prompt-template", template=template))
    path.write_text(json.dumps({"name": "Greeter", **document}))


async def test_files_become_flows_once_and_a_changed_file_a_new_version(
    store: Store, tmp_path: Path, capsys
):
    folder = tmp_path / "flows"
    folder.mkdir()
    write(folder / "greeter.json", "Hi {{ $json.message }}")
    (folder / "greeter.mock.yaml").write_text("not: a graph\n")
    (folder / "greeter.flowtest.yaml").write_text("flow: greeter.json\ntests: []\n")
    (folder / "broken.json").write_text("{nope")
    registry = default_registry()

    assert await import_flows(store, registry, [folder]) == ["Greeter (version 1)"]
    skipped = capsys.readouterr().err
    assert "broken.json" in skipped  # named with its problem
    assert "flowtest" not in skipped and "mock" not in skipped  # not graphs: not tried
    assert [f.name for f in await store.list_flows()] == ["Greeter"]
    assert await import_flows(store, registry, [folder]) == []  # a restart adds nothing

    write(folder / "greeter.json", "Hello {{ $json.message }}")
    assert await import_flows(store, registry, [folder]) == ["Greeter (version 2)"]
    (flow,) = await store.list_flows()
    assert flow.latest_version == 2
