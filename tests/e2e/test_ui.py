"""The web UI end to end: Debian Chromium, driven by Playwright, against a real `nodeloom
serve` and the scripted LLM. Each step leaves a screenshot in test-artifacts/e2e/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Locator, Page, expect

from nodeloom.testing.builders import edge, node

from ..server.conftest import Server
from .conftest import REPLY, Shots


def node_ids(page: Page) -> list[str]:
    return page.locator(".react-flow__node").evaluate_all("els => els.map(e => e.dataset.id)")


def drop(page: Page, node_type: str, x: int, y: int) -> str:
    """Drag a palette item onto the canvas at (x, y) of the pane; the new node's id."""
    before = set(node_ids(page))
    page.drag_and_drop(
        f'[data-testid="palette-item-{node_type}"]',
        ".react-flow__pane",
        target_position={"x": x, "y": y},
    )
    expect(page.locator(".react-flow__node")).to_have_count(len(before) + 1)
    (added,) = set(node_ids(page)) - before
    return added


def canvas_node(page: Page, node_id: str) -> Locator:
    return page.locator(f'.react-flow__node[data-id="{node_id}"]')


def wire(page: Page, source: str, target: str, handle: str = "input") -> None:
    """Drag from the source node's main output handle to the target's `handle`."""
    start = canvas_node(page, source).locator('.react-flow__handle.source[data-handleid="output"]')
    end = canvas_node(page, target).locator(f'.react-flow__handle.target[data-handleid="{handle}"]')
    a, b = start.bounding_box(), end.bounding_box()
    assert a is not None and b is not None
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=12)
    page.mouse.up()


def send(page: Page, message: str) -> None:
    page.get_by_label("Message").fill(message)
    page.get_by_role("button", name="Send").click()


def test_build_a_flow_run_it_from_the_chat_and_find_it_again(
    page: Page, ui_server: Server, api: httpx.Client, shots: Shots
):
    page.goto(f"{ui_server.url}/#/flows")
    expect(page.locator('[data-testid="palette-item-chat-start"]')).to_be_visible()
    # A node of a plugin folder (the server's NODELOOM_NODES_PATH) is in the palette too:
    # every node is drawn from the catalogue, none is known to the UI's code.
    page.get_by_label("Search nodes").fill("sleep")
    expect(page.locator('[data-testid="palette-item-sleep"]')).to_be_visible()
    expect(page.locator('[data-testid="palette-item-chat-start"]')).to_be_hidden()
    page.get_by_label("Search nodes").fill("")
    shots.take(page, "empty editor")

    # Three nodes dragged from the palette, wired start -> llm -> template.
    start = drop(page, "chat-start", 60, 60)
    llm = drop(page, "llm-completion", 60, 330)
    template = drop(page, "prompt-template", 420, 60)
    shots.take(page, "three nodes dropped")
    wire(page, start, llm)
    wire(page, llm, template)
    expect(page.locator(".react-flow__edge")).to_have_count(2)
    canvas_node(page, template).get_by_label("Template").fill("Answer: {{ $json.text }}")
    page.get_by_role("button", name="Auto layout").click()
    page.get_by_role("button", name="Fit view", exact=True).click()
    page.wait_for_timeout(500)  # the view glides there in 200 ms
    shots.take(page, "three nodes wired and laid out")

    # A second wire into the template's single input is refused, and says why.
    wire(page, start, template)
    refused = page.get_by_test_id("connection-refused")
    expect(refused).to_be_visible()
    expect(refused).to_contain_text("already has an incoming edge")
    expect(page.locator(".react-flow__edge")).to_have_count(2)
    shots.take(page, "invalid connection refused")

    page.get_by_label("Flow name").fill("E2E trio")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_test_id("save-status")).to_contain_text("Saved v1")
    expect(page).to_have_url(re.compile(r"#/flows/[^/]+$"))
    flow_id = page.url.rsplit("/", 1)[1]
    saved = api.get(f"/api/flows/{flow_id}").json()
    assert saved["name"] == "E2E trio"
    assert {(e["source"], e["target"]) for e in saved["document"]["edges"]} == {
        (start, llm),
        (llm, template),
    }
    shots.take(page, "saved")

    # Run it from the chat panel: the tokens stream in, each node gets a step card.
    send(page, "Tell me about Lima")
    answer = page.get_by_test_id("chat-answer").last
    expect(answer).to_contain_text("Lima")  # the first streamed words
    partial = answer.inner_text()
    shots.take(page, "tokens streaming")
    expect(answer).to_have_text(f"Answer: {REPLY}")
    assert partial != f"Answer: {REPLY}", "the answer arrived whole, not streamed"
    # The cards are the server's flow_step blocks: Chat Start, the bridge, has none.
    cards = page.get_by_test_id("step-card")
    expect(cards).to_have_count(2)
    for node_id in (start, llm, template):
        if node_id != start:
            card = page.locator(f'[data-testid="step-card"][data-node-id="{node_id}"]')
            expect(card).to_have_attribute("data-status", "done")
        expect(canvas_node(page, node_id).locator("[data-status]").first).to_have_attribute(
            "data-status", "done"
        )
    shots.take(page, "run done")

    # The run in the history: each node's output.
    (run,) = api.get("/api/runs", params={"flow_id": flow_id}).json()["runs"]
    page.goto(f"{ui_server.url}/#/runs")
    expect(page.get_by_test_id("run-row").first).to_be_visible()
    shots.take(page, "run history")
    page.goto(f"{ui_server.url}/#/runs/{run['id']}")
    expect(page.get_by_test_id(f"node-output-{llm}")).to_contain_text(REPLY)
    expect(page.get_by_test_id(f"node-output-{template}")).to_contain_text(f"Answer: {REPLY}")
    expect(page.get_by_test_id(f"node-output-{start}")).to_contain_text("Tell me about Lima")
    shots.take(page, "run detail")

    # A reload finds the saved flow as it was.
    page.goto(f"{ui_server.url}/#/flows/{flow_id}")
    page.reload()
    expect(page.locator(".react-flow__node")).to_have_count(3)
    expect(page.locator(".react-flow__edge")).to_have_count(2)
    expect(page.get_by_label("Flow name")).to_have_value("E2E trio")
    shots.take(page, "reloaded")


def approval_flow() -> dict[str, Any]:
    """Start -> Review (an approval) -> Publish, on the approve port."""
    nodes = [
        node("start", "chat-start", name="Start"),
        node("review", "approval", name="Review", prompt="Publish this?"),
        node(
            "publish", "prompt-template", name="Publish", template="Published: {{ $json.message }}"
        ),
    ]
    for index, item in enumerate(nodes):
        item["position"] = {"x": 320 * index, "y": 120}
    return {
        "nodes": nodes,
        "edges": [edge("start", "review"), edge("review", "publish", "approve")],
    }


def test_approve_a_paused_run_from_the_chat(
    page: Page, ui_server: Server, api: httpx.Client, shots: Shots
):
    created = api.post("/api/flows", json={"name": "E2E approval", "document": approval_flow()})
    assert created.status_code == 201, created.text
    flow_id = created.json()["flow_id"]
    page.goto(f"{ui_server.url}/#/flows/{flow_id}")
    expect(page.locator(".react-flow__node")).to_have_count(3)

    send(page, "the spring issue")
    approval = page.get_by_test_id("approval")
    expect(approval).to_be_visible()
    expect(approval).to_contain_text("Publish this?")
    expect(canvas_node(page, "review").locator("[data-status]").first).to_have_attribute(
        "data-status", "waiting"
    )
    shots.take(page, "waiting for approval")

    approval.get_by_label("Note").fill("looks good")
    approval.get_by_role("button", name="Approve").click()
    expect(page.get_by_test_id("chat-answer").last).to_contain_text("Published: the spring issue")
    shots.take(page, "approved and done")

    (run,) = api.get("/api/runs", params={"flow_id": flow_id}).json()["runs"]
    assert run["status"] == "completed"
    timeline = api.get(f"/api/runs/{run['id']}").json()["timeline"]
    review = next(step for step in timeline if step["node_id"] == "review")
    assert review["outputs"]["decision"] == {"decision": "approve", "note": "looks good"}


# Every control a keyboard user needs: what Tab must reach on each page.
_CONTROLS = (
    "button:not([disabled]), input:not([disabled]), select:not([disabled]), "
    "textarea:not([disabled]), a[href], [tabindex]:not([tabindex='-1'])"
)

# An outline or a shadow on the control, or on its label (a chip rings with :focus-within).
_FOCUS_SHOWN = """el => [el, el.closest('label')].filter(Boolean).some(shown => {
  const style = getComputedStyle(shown)
  const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0
  return outline || style.boxShadow !== 'none'
})"""


def tab_through(page: Page, limit: int) -> tuple[set[str], list[str]]:
    """Press Tab `limit` times: the controls reached (by a key made for each), and those
    that showed no focus indicator."""
    page.evaluate(
        """selector => document.querySelectorAll(selector).forEach((el, i) => {
             if (el.offsetParent !== null) el.dataset.tabKey = String(i)
           })""",
        _CONTROLS,
    )
    reached: set[str] = set()
    unmarked: list[str] = []
    page.locator("body").focus()
    for _ in range(limit):
        page.keyboard.press("Tab")
        key = page.evaluate("document.activeElement?.dataset?.tabKey ?? null")
        if key is None or key in reached:
            continue
        reached.add(key)
        if not page.evaluate(f"({_FOCUS_SHOWN})(document.activeElement)"):
            unmarked.append(page.evaluate("document.activeElement.outerHTML.slice(0, 120)"))
    return reached, unmarked


def test_every_control_is_reachable_by_keyboard_with_a_visible_focus(
    page: Page, ui_server: Server, api: httpx.Client, shots: Shots
):
    created = api.post("/api/flows", json={"name": "E2E keyboard", "document": approval_flow()})
    flow_id = created.json()["flow_id"]
    api.put("/api/credentials/keyboard_key", json={"value": "k"})
    for route in (f"#/flows/{flow_id}", "#/runs", "#/settings"):
        page.goto(f"{ui_server.url}/{route}")
        page.wait_for_load_state("networkidle")
        expected = set(
            page.locator(_CONTROLS).evaluate_all(
                "els => els.filter(e => e.offsetParent !== null).map((e, i) => i)"
            )
        )
        reached, unmarked = tab_through(page, limit=len(expected) + 40)
        missing = page.evaluate(
            """reached => [...document.querySelectorAll('[data-tab-key]')]
                 .filter(el => !reached.includes(el.dataset.tabKey))
                 .map(el => el.outerHTML.slice(0, 120))""",
            sorted(reached),
        )
        assert missing == [], f"{route}: Tab never reaches {missing}"
        assert unmarked == [], f"{route}: no visible focus on {unmarked}"
        shots.take(page, f"keyboard {route.split('/')[1]}")


def test_the_layout_uses_a_large_screen_and_fits_the_smallest(
    browser, ui_server: Server, api: httpx.Client, shots: Shots
):
    created = api.post("/api/flows", json={"name": "E2E layout", "document": approval_flow()})
    flow_id = created.json()["flow_id"]
    for width, height in ((1280, 720), (1920, 1080)):
        context = browser.new_context(viewport={"width": width, "height": height})
        context.add_init_script(
            f"window.localStorage.setItem('nodeloom.token', {ui_server.token!r})"
        )
        page = context.new_page()
        try:
            page.goto(f"{ui_server.url}/#/flows/{flow_id}")
            expect(page.locator(".react-flow__node")).to_have_count(3)
            size = page.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            assert size == [width, height], f"the page scrolls at {width}x{height}: {size}"
            pane = page.locator(".react-flow").bounding_box()
            assert pane is not None and pane["width"] >= width - 600
            for control in ("Save", "Send", "Auto layout"):
                button = page.get_by_role("button", name=control, exact=True)
                box = button.bounding_box()
                assert box is not None and box["x"] + box["width"] <= width, control
                assert box["y"] + box["height"] <= height, control
            shots.take(page, f"editor {width}x{height}")
        finally:
            context.close()


def test_import_opens_a_file_of_another_format_converted(
    page: Page, ui_server: Server, shots: Shots, tmp_path
):
    examples = Path(__file__).resolve().parents[2] / "examples"
    page.goto(f"{ui_server.url}/#/flows")
    expect(page.locator('[data-testid="palette-item-chat-start"]')).to_be_visible()
    page.get_by_label("Import file").set_input_files(examples / "workflow" / "review.workflow.json")
    expect(page.locator(".react-flow__node")).to_have_count(6)
    expect(canvas_node(page, "writer")).to_contain_text("Workflow Agent")
    shots.take(page, "imported workflow")

    native_yaml = tmp_path / "tiny.yaml"
    native_yaml.write_text(
        "name: Tiny\nnodes:\n  - {id: start, type: chat-start}\n"
        "  - {id: say, type: prompt-template, data: {template: 'hi {{ $json.message }}'}}\n"
        "edges:\n  - {source: start, target: say}\n"
    )
    page.get_by_label("Import file").set_input_files(native_yaml)
    expect(page.locator(".react-flow__node")).to_have_count(2)
    expect(page.locator(".react-flow__edge")).to_have_count(1)
    shots.take(page, "imported yaml")


def test_the_server_s_validation_issues_show_on_the_node_they_concern(
    page: Page, ui_server: Server, shots: Shots
):
    page.goto(f"{ui_server.url}/#/flows")
    expect(page.locator('[data-testid="palette-item-chat-start"]')).to_be_visible()
    template = drop(page, "prompt-template", 120, 120)  # its template is required, and empty
    issues = canvas_node(page, template).get_by_test_id("node-issues")
    expect(issues).to_contain_text("needs 'template'")
    shots.take(page, "issue on the node")

    canvas_node(page, template).get_by_label("Template").fill("Hello")
    expect(issues).to_have_count(0)
    shots.take(page, "issue fixed")
