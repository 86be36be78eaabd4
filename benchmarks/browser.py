"""Target 9: the web UI in a real browser. A 500-node flow saved in a real `nodeloom serve`
is opened in Debian's Chromium (headless, driven by Playwright): the time from navigation
to the frame after every node is on the canvas; then one node is dragged for about two
seconds while the page counts its animation frames.

The floor: the same 500 nodes as plain absolutely-positioned DOM elements (a title and an
input each) written by a few lines of JavaScript, no React and no React Flow, timed the
same way, and a plain element dragged by a `mousemove` handler.

Needs /usr/bin/chromium (`apt-get install chromium`); without it the benchmark says so
and is skipped.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from benchmarks.report import Figure, Verdict
from benchmarks.server import ServeProcess
from nodeloom.testing.browser import CHROMIUM, CHROMIUM_ARGS, chromium

NODES = 500
OPEN_S = 2.0
DRAG_FPS = 30.0
DRAG_MOVES = 120
MOVE_PAUSE_MS = 16

# Resolves with performance.now() at the first frame after `count` nodes are in the page.
_RENDERED = """(count) => new Promise((resolve) => {
  const check = () => {
    if (document.querySelectorAll('.react-flow__node, .floor-node').length >= count) {
      requestAnimationFrame(() => resolve(performance.now()))
    } else {
      requestAnimationFrame(check)
    }
  }
  check()
})"""

_COUNT_FRAMES = """() => {
  window.__frames = []
  const tick = (t) => {
    window.__frames.push(t)
    if (window.__counting) requestAnimationFrame(tick)
  }
  window.__counting = true
  requestAnimationFrame(tick)
}"""

_FRAMES_PER_SECOND = """() => {
  window.__counting = false
  const f = window.__frames
  return f.length < 2 ? 0 : (f.length - 1) * 1000 / (f[f.length - 1] - f[0])
}"""

_FLOOR_PAGE = """<!doctype html><html><body style="margin:0;background:#0f1115;color:#eee">
<div id="plane" style="position:relative;width:6000px;height:4000px"></div>
<script>
function draw(count) {
  const plane = document.getElementById('plane')
  for (let i = 0; i < count; i++) {
    const el = document.createElement('div')
    el.className = 'floor-node'
    const left = (i % 25) * 240, top = Math.floor(i / 25) * 180
    el.style.cssText = `position:absolute;left:${left}px;top:${top}px;`
      + 'width:200px;padding:8px;border:1px solid #444;border-radius:6px;background:#1e222b'
    el.innerHTML = `<div>Node ${i}</div><textarea aria-label="Template ${i}"></textarea>`
    plane.appendChild(el)
  }
  let dragged = null, dx = 0, dy = 0
  plane.addEventListener('mousedown', (e) => {
    dragged = e.target.closest('.floor-node')
    if (dragged) { dx = e.clientX - dragged.offsetLeft; dy = e.clientY - dragged.offsetTop }
  })
  window.addEventListener('mousemove', (e) => {
    if (!dragged) return
    dragged.style.left = (e.clientX - dx) + 'px'
    dragged.style.top = (e.clientY - dy) + 'px'
  })
  window.addEventListener('mouseup', () => { dragged = null })
}
</script></body></html>"""


def flow_document(count: int) -> dict[str, Any]:
    """Chat Start, then a chain of Prompt Template, JSON Transform and LLM Completion nodes
    (inline controls of several kinds) on a 25-wide grid."""
    kinds = [
        ("prompt-template", {"template": "Step {{ $json.text }}"}),
        ("json-transform", {"expression": "$"}),
        ("llm-completion", {"prompt": "Go on"}),
    ]
    nodes: list[dict[str, Any]] = [
        {"id": "n0", "type": "chat-start", "data": {}, "position": {"x": 0, "y": 0}}
    ]
    for index in range(1, count):
        kind, data = kinds[index % len(kinds)]
        position = {"x": (index % 25) * 320, "y": (index // 25) * 260}
        nodes.append({"id": f"n{index}", "type": kind, "data": dict(data), "position": position})
    edges = [
        {
            "id": f"e{i}",
            "source": f"n{i - 1}",
            "sourceHandle": "output",
            "target": f"n{i}",
            "targetHandle": "input",
        }
        for i in range(1, count)
    ]
    return {"nodes": nodes, "edges": edges}


def _drag(page: Any, start: tuple[float, float]) -> float:
    """Drag from `start` for DRAG_MOVES small moves; the page's frames per second."""
    page.evaluate(_COUNT_FRAMES)
    x, y = start
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(DRAG_MOVES):
        page.mouse.move(x + step * 3, y + (step % 40) * 2)
        page.wait_for_timeout(MOVE_PAUSE_MS)
    page.mouse.up()
    return float(page.evaluate(_FRAMES_PER_SECOND))


def _measure(executable: str, server: ServeProcess, flow_id: str, count: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=list(CHROMIUM_ARGS))
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            context.add_init_script(
                f"window.localStorage.setItem('nodeloom.token', {server.token!r})"
            )
            page = context.new_page()
            page.goto(f"{server.url}/#/flows")  # warm: the bundle is cached, as on a revisit
            page.wait_for_selector('[data-testid^="palette-item-"]')
            page.goto("about:blank")
            page.goto(f"{server.url}/#/flows/{flow_id}")
            opened_ms = float(page.evaluate(_RENDERED, count))
            box = page.locator('.react-flow__node[data-id="n1"] [data-testid="node-title"]')
            box.wait_for()
            bounds = box.bounding_box()
            assert bounds is not None
            fps = _drag(page, (bounds["x"] + 10, bounds["y"] + bounds["height"] / 2))
            moved = box.bounding_box()
            if moved is None or abs(moved["x"] - bounds["x"]) < 50:
                raise RuntimeError("the drag did not move the node: the figure would be void")

            floor = context.new_page()
            floor.goto("about:blank")
            floor.set_content(_FLOOR_PAGE)
            started = float(floor.evaluate("performance.now()"))
            floor.evaluate(f"draw({count})")
            floor_ms = float(floor.evaluate(_RENDERED, count)) - started
            floor_fps = _drag(floor, (20, 12))
        finally:
            browser.close()
    return {"open_ms": opened_ms, "fps": fps, "floor_open_ms": floor_ms, "floor_fps": floor_fps}


async def browser_ui(count: int = NODES) -> tuple[list[Figure], list[Verdict]]:
    executable = chromium()
    if executable is None:
        print(
            f"browser benchmark skipped: no {CHROMIUM} (apt-get install chromium)",
            file=sys.stderr,
        )
        return [], []
    with tempfile.TemporaryDirectory() as folder:
        server = ServeProcess(Path(folder), "http://127.0.0.1:9/v1")
        try:
            await server.wait_ready()
            async with httpx.AsyncClient(
                base_url=server.url, headers={"Authorization": f"Bearer {server.token}"}
            ) as client:
                saved = await client.post(
                    "/api/flows", json={"name": f"{count} nodes", "document": flow_document(count)}
                )
                saved.raise_for_status()
            flow_id = saved.json()["flow_id"]
            found = await asyncio.to_thread(_measure, executable, server, flow_id, count)
        finally:
            server.close()
    open_s = found["open_ms"] / 1000
    figures = [
        Figure(
            "browser.open",
            f"browser: open a {count}-node flow (navigation to every node drawn)",
            found["open_ms"],
            "ms",
            found["floor_open_ms"],
            target=f"≤ {OPEN_S * 1000:,.0f} ms",
            passed=open_s <= OPEN_S,
        ),
        Figure(
            "browser.drag",
            f"browser: frames per second while dragging a node of the {count}-node flow",
            found["fps"],
            "fps",
            found["floor_fps"],
            higher_is_better=True,
            target=f"≥ {DRAG_FPS:.0f} fps",
            passed=found["fps"] >= DRAG_FPS,
        ),
    ]
    verdict = Verdict(
        9,
        open_s <= OPEN_S and found["fps"] >= DRAG_FPS,
        f"opened in {open_s:.2f} s, dragged at {found['fps']:.0f} fps",
    )
    return figures, [verdict]


def main() -> None:
    """`python -m benchmarks.browser [NODES]`: this benchmark alone."""
    figures, verdicts = asyncio.run(browser_ui(int(sys.argv[1]) if len(sys.argv) > 1 else NODES))
    for figure in figures:
        print(figure)
    for verdict in verdicts:
        print(verdict)


if __name__ == "__main__":
    main()
