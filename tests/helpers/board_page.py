"""The dashboard in one browser page: navigation, the waits its tests share, and what it plots.

Every wait is on a condition in the page with a bound (Playwright's timeout), never a sleep.
Charts are found by their tag (``.card[data-tag]``); what a chart plots is read from its
plotly graph div (``div.data``: one trace per run, rank and kind, ``meta`` naming them).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

WAIT_MS = 30_000
"""Bound of every wait on the page (loose: this machine is shared and has two cores)."""

_ROW = ".run-row:not([hidden])"
_CARD = "(tag) => [...document.querySelectorAll('.card')].find((c) => c.dataset.tag === tag)"
_TRACES = f"""(tag) => ({_CARD})(tag).querySelector('.plot').data.map((t) => ({{
    run: t.meta.run, rank: t.meta.rank, tag: t.meta.tag, kind: t.meta.kind, name: t.name,
    x: Array.from(t.x), y: Array.from(t.y) }}))"""


class BoardPage:
    """A page of the dashboard served at ``url`` (the server's base URL, prefix included)."""

    def __init__(self, page: Page, url: str, artifacts: Path) -> None:
        self.page = page
        self.url = url
        self.artifacts = artifacts

    def open(self, fragment: str = "") -> None:
        """Load the dashboard at ``#fragment`` (e.g. ``/scalars?run=./a``)."""
        self.page.goto(f"{self.url}/{'#' + fragment if fragment else ''}")

    def wait_runs_listed(self, run_ids: list[str]) -> None:
        """Until the run table shows a link for each of ``run_ids``."""
        self.page.wait_for_function(
            f"""(ids) => {{ const shown = new Set([...document.querySelectorAll('{_ROW} .run-link')]
                .map((a) => a.textContent));
              return ids.every((id) => shown.has(id)); }}""",
            arg=run_ids,
            timeout=WAIT_MS,
        )

    def wait_row_count(self, count: int) -> None:
        """Until the run table shows ``count`` rows."""
        self.page.wait_for_function(
            f"(n) => document.querySelectorAll('{_ROW}').length === n", arg=count, timeout=WAIT_MS
        )

    def row_elements(self) -> int:
        """How many row elements the run table holds (shown or not)."""
        return self.page.evaluate("() => document.querySelectorAll('.run-row').length")

    def scroll_runs(self, top: float) -> None:
        """Scroll the run table to ``top`` pixels (clamped to its height)."""
        self.page.evaluate("(top) => { document.querySelector('.viewport').scrollTop = top; }", top)

    def listed_runs(self) -> list[str]:
        """The run ids of the table rows in the DOM, top to bottom."""
        return self.page.evaluate(
            f"""() => [...document.querySelectorAll('{_ROW}')]
                .sort((a, b) => a.dataset.index - b.dataset.index)
                .map((row) => row.querySelector('.run-link').textContent)"""
        )

    def draws(self, tag: str) -> int:
        """How many times the chart of ``tag`` has been drawn (0 before its first draw)."""
        return int(self.page.evaluate(f"(tag) => ({_CARD})(tag)?.dataset.draws ?? '0'", tag))

    def wait_drawn(self, tag: str, after: int = 0) -> int:
        """Until the chart of ``tag`` has been drawn more than ``after`` times and is idle."""
        self.page.wait_for_function(
            f"""([tag, after]) => {{ const card = ({_CARD})(tag);
                return card && Number(card.dataset.draws) > after
                    && ['ready', 'empty'].includes(card.dataset.state); }}""",
            arg=[tag, after],
            timeout=WAIT_MS,
        )
        return self.draws(tag)

    def traces(self, tag: str) -> list[dict[str, Any]]:
        """What the chart of ``tag`` plots: run, rank, tag, kind (raw/smoothed), name, x, y."""
        return self.page.evaluate(_TRACES, tag)

    def layout(self, tag: str) -> dict[str, Any]:
        """The chart's axes as plotly holds them now (type, range, autorange)."""
        return self.page.evaluate(
            f"""(tag) => {{ const l = ({_CARD})(tag).querySelector('.plot').layout;
                const axis = (a) => ({{ type: a.type, range: a.range, autorange: a.autorange }});
                return {{ xaxis: axis(l.xaxis), yaxis: axis(l.yaxis) }}; }}""",
            tag,
        )

    def relayout(self, tag: str, update: dict[str, Any]) -> None:
        """Zoom the chart of ``tag`` the way a mouse drag does (``Plotly.relayout``)."""
        self.page.evaluate(
            f"([tag, update]) => Plotly.relayout(({_CARD})(tag).querySelector('.plot'), update)",
            [tag, update],
        )

    def charted_tags(self) -> list[str]:
        """The tags whose card holds a plotly chart now (cards off screen hold none)."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('.card')]
                .filter((card) => card.querySelector('.plot .main-svg'))
                .map((card) => card.dataset.tag)"""
        )

    def scroll_cards(self, top: float) -> None:
        """Scroll the chart cards to ``top`` pixels (clamped to their height)."""
        self.page.evaluate("(top) => { document.querySelector('.cards').scrollTop = top; }", top)

    def screenshot(self, name: str) -> Path:
        """Save the viewport as ``<artifacts>/<name>.png`` (and in $SUMLENS_ARTIFACTS)."""
        path = self.artifacts / f"{name}.png"
        self.page.screenshot(path=path)
        extra = os.environ.get("SUMLENS_ARTIFACTS")
        if extra and Path(extra).resolve() != self.artifacts.resolve():
            Path(extra).mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, Path(extra) / path.name)
        return path
