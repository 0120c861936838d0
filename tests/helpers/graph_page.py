"""The graph view in one browser page: what it draws, and the clicks and searches a user makes.

Boxes are found by their ``data-name`` (the node or scope name), never by position. The view
marks its state on its section (``data-state``: loading, drawn, error; ``data-draws``: how
many drawings so far); every wait is on those with a bound, never a sleep.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from playwright.sync_api import Locator

from helpers.board_page import WAIT_MS, BoardPage

VIEW = "#graph-view"
_DRAWN = "#graph-view .graph-world [data-kind]"
_BOX = f"""([kind, name]) => [...document.querySelectorAll('{_DRAWN}')]
    .find((e) => e.dataset.kind === kind && e.dataset.name === name)"""


class GraphPage(BoardPage):
    """The dashboard's graph view."""

    def open_graph(self, run: str, options: dict[str, Any] | None = None) -> int:
        """Load ``#/graph?run=<run>`` (with ``options`` as the view's URL settings); wait
        until drawn; the number of drawings made."""
        fragment = f"/graph?run={quote(run)}"
        if options:
            fragment += f"&g={quote(json.dumps(options))}"
        self.open(fragment)
        return self.wait_drawing()

    def drawings(self) -> int:
        """Drawings made so far."""
        return int(self.page.eval_on_selector(VIEW, "(e) => e.dataset.draws"))

    def wait_drawing(self, after: int = 0) -> int:
        """Until more than ``after`` drawings are made and the view is idle again."""
        self.page.wait_for_function(
            """(after) => { const v = document.querySelector('#graph-view');
                return v.dataset.state === 'drawn' && Number(v.dataset.draws) > after; }""",
            arg=after,
            timeout=WAIT_MS,
        )
        return self.drawings()

    def wait_error(self) -> str:
        """Until the view shows a problem; its text."""
        self.page.wait_for_function(
            "() => document.querySelector('#graph-view').dataset.state === 'error'",
            timeout=WAIT_MS,
        )
        return self.page.inner_text(".graph-problem")

    def status(self) -> str:
        """The view's status line (what is drawn, or what is being laid out)."""
        return self.page.inner_text(".graph-status")

    def scale(self) -> float:
        """The drawing's zoom factor."""
        return float(self.page.eval_on_selector(".graph-svg", "(e) => e.dataset.scale"))

    def wait_laying_out(self) -> str:
        """Until the view says it is laying a drawing out; that line."""
        self.page.wait_for_function(
            """() => document.querySelector('#graph-view').dataset.state === 'loading'
                && document.querySelector('.graph-status').textContent.startsWith('Laying out')""",
            timeout=WAIT_MS,
        )
        return self.status()

    def boxes(self) -> list[tuple[str, str]]:
        """(kind, name) of everything drawn: node, scope (closed) and cluster (open scope)."""
        return [
            tuple(item)
            for item in self.page.eval_on_selector_all(
                _DRAWN, "(all) => all.map((e) => [e.dataset.kind, e.dataset.name])"
            )
        ]

    def box(self, kind: str, name: str) -> Locator:
        """The drawn box (or frame) of ``name``."""
        handle = self.page.evaluate_handle(_BOX, [kind, name]).as_element()
        assert handle is not None, f"no {kind} {name!r} drawn; drawn: {self.boxes()}"
        return self.page.locator(f'{VIEW} [data-id="{handle.get_attribute("data-id")}"]')

    def toggle(self, kind: str, name: str) -> int:
        """Double-click a scope (open or close it); wait for the new drawing."""
        before = self.drawings()
        box = self.box(kind, name)
        box.locator("rect").first.dblclick(position={"x": 12, "y": 10})
        return self.wait_drawing(before)

    def search(self, text: str) -> list[str]:
        """Type ``text`` in the search box; the names it lists."""
        self.page.fill(".graph-search", text)
        self.page.wait_for_selector(".graph-results:not([hidden])", timeout=WAIT_MS)
        return self.page.eval_on_selector_all(
            ".graph-result", "(all) => all.map((e) => e.textContent)"
        )

    def pick_result(self, name: str) -> None:
        """Click the search result ``name``; wait until the panel shows it."""
        self.page.locator(".graph-result", has_text=name).first.click()
        self.wait_selected(name)

    def wait_selected(self, name: str) -> None:
        """Until the side panel shows ``name``."""
        self.page.wait_for_function(
            "(name) => document.querySelector('.graph-panel').dataset.selected === name",
            arg=name,
            timeout=WAIT_MS,
        )

    def panel_field(self, css: str) -> str:
        """The text of a field of the side panel (e.g. ``.graph-type``)."""
        return self.page.inner_text(f".graph-panel {css}")

    def selected_box(self) -> str | None:
        """The name of the box drawn as selected."""
        return self.page.evaluate(
            "() => document.querySelector('#graph-view .selected')?.dataset.name ?? null"
        )

    def options(self) -> dict[str, Any]:
        """The view's settings in the URL (its ``g`` parameter)."""
        return self.page.evaluate(
            """() => { const q = location.hash.split('?')[1] ?? '';
                return JSON.parse(new URLSearchParams(q).get('g') ?? '{}'); }"""
        )

    def drawing_inside(self) -> bool:
        """Whether the whole drawing lies inside the drawing area."""
        return self.page.evaluate(
            """() => { const svg = document.querySelector('.graph-svg').getBoundingClientRect();
                const world = document.querySelector('.graph-world').getBoundingClientRect();
                return world.width > 0 && world.left >= svg.left - 1 && world.top >= svg.top - 1
                    && world.right <= svg.right + 1 && world.bottom <= svg.bottom + 1; }"""
        )
