"""A newcomer's first minute, in a browser: `scripts/run`'s server (`nodeloom serve --dev
--flows examples`) on a fresh data directory opens on the example flows, one runs from its
Run button and answers in the chat panel, `?` shows the shortcuts, and no example's nodes
overlap as the editor draws them (a screenshot of each in test-artifacts/e2e/)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..server.conftest import Server, start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.json"))

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def scripts_run_arguments() -> list[str]:
    """`nodeloom serve`'s arguments in scripts/run, without OPENAI_API_KEY: read from the
    script itself, so the test follows it."""
    text = (ROOT / "scripts" / "run").read_text(encoding="utf-8")
    assert 'serve --dev --flows examples "${mock[@]}"' in text
    assert "--mock-llm" in text
    mocks = sorted((ROOT / "examples").glob("*.mock.yaml"))
    return ["--dev", "--flows", str(ROOT / "examples"), *(f"--mock-llm={m}" for m in mocks)]


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The server as `scripts/run` starts it, on an empty data directory, with no
    provider key: the examples' mock LLM scripts answer."""
    environment = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    started = start_server(
        tmp_path_factory.mktemp("newcomer"), *scripts_run_arguments(), environment=environment
    )
    try:
        yield started
    finally:
        stop_server(started)


@pytest.fixture
def fresh_page(browser, newcomer: Server):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.set_default_timeout(15_000)
    try:
        yield opened
    finally:
        context.close()
    assert errors == [], f"the page raised: {errors}"


def test_a_newcomer_sees_the_examples_runs_one_and_reads_its_answer(fresh_page, newcomer, shots):
    from playwright.sync_api import expect

    page = fresh_page
    page.goto(newcomer.url)
    flows = page.get_by_role("list", name="Saved flows")
    expect(flows.get_by_role("heading", name="Hello")).to_be_visible()
    expect(
        flows.get_by_text("The smallest flow: a chat message through a prompt template.")
    ).to_be_visible()
    assert flows.get_by_role("listitem").count() == len(EXAMPLES)
    shots.take(page, "the saved flows")

    page.get_by_role("link", name="Run Hello").click()
    message = page.get_by_role("textbox", name="Message")
    expect(message).to_be_focused()
    expect(page.get_by_text("Type a message below and press")).to_be_visible()
    message.type("hi")
    message.press("Enter")
    expect(page.get_by_label("Chat").get_by_text("Hello! You said: hi").first).to_be_visible()
    shots.take(page, "the answer")


def test_an_example_with_a_model_runs_offline_on_its_mock_script(fresh_page, newcomer, shots):
    from playwright.sync_api import expect

    page = fresh_page
    page.goto(newcomer.url)
    page.get_by_role("link", name="Run Support router").click()
    message = page.get_by_role("textbox", name="Message")
    expect(message).to_be_focused()
    message.type("I was charged twice, refund?")
    message.press("Enter")
    chat = page.get_by_label("Chat")
    expect(chat.get_by_text("[billing] I am sorry about the charge.").first).to_be_visible()
    shots.take(page, "the support router answers")


def test_the_question_mark_lists_the_shortcuts_and_the_docs(fresh_page, newcomer):
    from playwright.sync_api import expect

    page = fresh_page
    page.goto(newcomer.url)
    expect(page.get_by_role("list", name="Saved flows")).to_be_visible()
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_text("Ctrl+S", exact=True)).to_be_visible()
    expect(dialog.get_by_text("docs/ui.md")).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)


def test_no_two_nodes_of_an_example_overlap_in_the_editor(fresh_page, newcomer, shots):
    from playwright.sync_api import expect

    page = fresh_page
    page.goto(newcomer.url)
    cards = page.get_by_role("list", name="Saved flows").get_by_role("listitem")
    expect(cards.first).to_be_visible()
    names = [cards.nth(i).get_by_role("heading").inner_text() for i in range(cards.count())]
    overlaps = []
    for name in names:
        page.goto(newcomer.url)
        page.get_by_role("listitem").filter(
            has=page.get_by_role("heading", name=name, exact=True)
        ).get_by_role("link", name="Open").click()
        nodes = page.locator(".react-flow__node")
        expect(nodes.first).to_be_visible()
        page.wait_for_timeout(300)  # fit view settles
        boxes = [
            (nodes.nth(i).inner_text().split("\n")[0], nodes.nth(i).bounding_box())
            for i in range(nodes.count())
        ]
        shots.take(page, name)
        for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
            assert box_a and box_b
            if (
                box_a["x"] < box_b["x"] + box_b["width"]
                and box_b["x"] < box_a["x"] + box_a["width"]
                and box_a["y"] < box_b["y"] + box_b["height"]
                and box_b["y"] < box_a["y"] + box_a["height"]
            ):
                overlaps.append(f"{name}: {a!r} and {b!r}")
    assert overlaps == []
