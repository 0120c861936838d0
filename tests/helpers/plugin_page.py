"""The plugin views in one browser page: the dashboard's cards, image and tensor panels, and
what the histogram charts plot.

Cards and panels are found by their data attributes (run, tag, rank), never by position.
Every wait is on a condition in the page with a bound, never a sleep. ``watched_page``
makes a page with the checks of the conftest's ``page`` fixture (no script error, failed
load, dialog, or request outside the local server), where a test may name the console
errors it provokes on purpose (a 422 for a bad slice).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from playwright.sync_api import Browser, ConsoleMessage, Dialog, Locator, Page, Request

from helpers.board_page import WAIT_MS, BoardPage

_CARD = """([plugin, run, tag]) => [...document.querySelectorAll(`.${plugin}-card`)]
    .find((c) => c.dataset.run === run && c.dataset.tag === tag)"""
_PANEL = f"""([plugin, run, tag, rank]) => {{
    const card = ({_CARD})([plugin, run, tag]);
    return card && [...card.querySelectorAll(`.${{plugin}}-panel`)]
        .find((p) => p.dataset.rank === (rank === null ? '' : String(rank)));
}}"""
_HIST = """(tag) => [...document.querySelectorAll('.histogram-card')]
    .find((c) => c.dataset.tag === tag)"""


class WatchedPage:
    """What a watched page saw go wrong, and the console errors a test allows."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.failed: list[str] = []
        """Requests that failed, with why (named with the console errors they cause)."""
        self.allowed: list[re.Pattern[str]] = []

    def allow_console_error(self, pattern: str) -> None:
        """Console errors matching ``pattern`` are expected from here on."""
        self.allowed.append(re.compile(pattern))


@contextlib.contextmanager
def watched_page(browser: Browser) -> Iterator[tuple[Page, WatchedPage]]:
    """A fresh 1440x900 page; on leaving, fails on a script error, a failed load (unless
    allowed), a dialog, or a request to anything but 127.0.0.1."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(WAIT_MS)
    tab = context.new_page()
    seen = WatchedPage()

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error" and not any(p.search(message.text) for p in seen.allowed):
            seen.problems.append(f"console error: {message.text}")

    def on_dialog(dialog: Dialog) -> None:
        seen.dialogs.append(dialog.message)
        dialog.dismiss()

    def on_request(request: Request) -> None:
        seen.requests.append(request.url)
        if not re.match(r"(data|blob):|http://127\.0\.0\.1[:/]", request.url):
            seen.problems.append(f"request outside the server: {request.url}")

    def on_failed(request: Request) -> None:
        if request.failure != "net::ERR_ABORTED":  # a load the page itself gave up is no fault
            seen.failed.append(f"{request.url} ({request.failure})")

    tab.on("pageerror", lambda error: seen.problems.append(f"page error: {error}"))
    tab.on("request", on_request)
    tab.on("requestfailed", on_failed)
    tab.on("console", on_console)
    tab.on("dialog", on_dialog)
    try:
        yield tab, seen
    finally:
        context.close()
    assert not seen.dialogs, f"dialogs opened: {seen.dialogs}"
    assert not seen.problems, "\n".join([*seen.problems, *seen.failed])


class PluginPage(BoardPage):
    """The dashboard's plugin views in a page (see BoardPage for navigation and screenshots)."""

    # ---- training dashboard ----------------------------------------------------------
    def wait_dashboard(self, run_id: str) -> None:
        """Until the dashboard shows ``run_id`` and every card has finished loading."""
        self.page.wait_for_function(
            """(id) => {
                const view = document.getElementById('run-view');
                if (view.hidden || view.querySelector('.dash-run').textContent !== id) return false;
                const cards = [...view.querySelectorAll('.dash-card')];
                const images = [...view.querySelectorAll('.dash-card img')];
                return cards.length > 0
                    && cards.every((c) => ['ready', 'empty', 'error'].includes(c.dataset.state))
                    && images.every((img) => img.complete && img.naturalWidth > 0);
            }""",
            arg=run_id,
            timeout=WAIT_MS,
        )

    def dashboard_cards(self) -> list[dict[str, Any]]:
        """Each card of the dashboard in order: plugin, state, rank labels, curves drawn per
        preview panel, caption, link, text."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('#run-view .dash-card')].map((card) => ({
                plugin: card.dataset.plugin,
                state: card.dataset.state,
                ranks: [...card.querySelectorAll('.dash-panel .panel-label')]
                    .map((label) => label.textContent),
                panels: card.querySelectorAll('.dash-panel').length,
                plots: [...card.querySelectorAll('.dash-plot')]
                    .filter((plot) => plot.querySelector('svg.sketch path, svg.sketch circle'))
                    .length,
                curves: [...card.querySelectorAll('.dash-plot')]
                    .map((plot) => plot.querySelectorAll('svg.sketch path').length),
                caption: card.querySelector('.dash-caption')?.textContent ?? null,
                images: card.querySelectorAll('img').length,
                link: card.querySelector('.open-view')?.getAttribute('href') ?? null,
                text: card.textContent,
            }))"""
        )

    # ---- image and tensor panels ---------------------------------------------------------
    def wait_panel(
        self,
        plugin: str,
        run: str,
        tag: str,
        rank: int | None,
        step: int | None = None,
        state: str = "ready",
        slice_: str | None = None,
    ) -> None:
        """Until the panel shows ``step`` (any when None) in ``state``; an image panel's
        image has loaded; a tensor panel shows ``slice_`` when given. The card is scrolled
        into view first (cards load only while on screen)."""
        card = self.page.wait_for_function(_CARD, arg=[plugin, run, tag], timeout=WAIT_MS)
        card.as_element().scroll_into_view_if_needed()  # type: ignore[union-attr]
        self.page.wait_for_function(
            f"""([plugin, run, tag, rank, step, state, slice]) => {{
                const panel = ({_PANEL})([plugin, run, tag, rank]);
                if (!panel || panel.dataset.state !== state) return false;
                if (step !== null && panel.dataset.step !== String(step)) return false;
                if (slice !== null && panel.dataset.slice !== slice) return false;
                const img = panel.querySelector('img');
                return !img || (img.complete && img.naturalWidth > 0);
            }}""",
            arg=[plugin, run, tag, rank, step, state, slice_],
            timeout=WAIT_MS,
        )

    def panel(self, plugin: str, run: str, tag: str, rank: int | None) -> dict[str, Any]:
        """What a panel shows: step label, slider position and size, image src, slice text,
        error text, shape line, and the table's cells (rows of texts)."""
        return self.page.evaluate(
            f"""(key) => {{ const panel = ({_PANEL})(key);
                const slider = panel.querySelector('.step-slider');
                const error = panel.querySelector('.slice-error');
                return {{
                    step: panel.querySelector('.step-label').textContent,
                    index: Number(slider.value), count: Number(slider.max) + 1,
                    src: panel.querySelector('img')?.src ?? null,
                    slice: panel.querySelector('.slice-input')?.value ?? null,
                    error: error && !error.hidden ? error.textContent : null,
                    shape: panel.querySelector('.shape-line')?.textContent ?? null,
                    rows: [...panel.querySelectorAll('.tensor-table tbody tr')].map((tr) =>
                        [...tr.querySelectorAll('td')].map((td) => td.textContent)),
                    stats: Object.fromEntries([...panel.querySelectorAll('.slice-stats dd')]
                        .map((dd) => [dd.dataset.stat, dd.textContent])),
                    bins: panel.querySelector('.value-plot')?.dataset.bins ?? null,
                    binned: panel.querySelector('.value-plot')?.data?.[0]?.y
                        ?.reduce((a, b) => a + b, 0) ?? null,
                }}; }}""",
            [plugin, run, tag, rank],
        )

    def slide_to(self, plugin: str, run: str, tag: str, rank: int | None, index: int) -> None:
        """Move the panel's step slider to ``index`` as a drag does (input, then change)."""
        self.page.evaluate(
            f"""([key, index]) => {{ const slider = ({_PANEL})(key).querySelector('.step-slider');
                slider.value = String(index);
                slider.dispatchEvent(new Event('input', {{ bubbles: true }}));
                slider.dispatchEvent(new Event('change', {{ bubbles: true }})); }}""",
            [[plugin, run, tag, rank], index],
        )

    def set_range(self, slider: Locator, value: float) -> None:
        """Move a range input to ``value`` as a drag does (input, then change)."""
        slider.evaluate(
            """(input, value) => { input.value = String(value);
                input.dispatchEvent(new Event('input', { bubbles: true }));
                input.dispatchEvent(new Event('change', { bubbles: true })); }""",
            value,
        )

    def image_bytes(self, run: str, tag: str, rank: int | None) -> bytes:
        """The bytes behind the panel's <img> src, fetched in the page."""
        values = self.page.evaluate(
            f"""async (key) => {{ const img = ({_PANEL})(key).querySelector('img');
                const response = await fetch(img.src);
                return Array.from(new Uint8Array(await response.arrayBuffer())); }}""",
            ["image", run, tag, rank],
        )
        return bytes(values)

    def type_slice(self, run: str, tag: str, rank: int | None, text: str) -> None:
        """Type ``text`` in the panel's slice editor and press Enter."""
        handle = self.page.evaluate_handle(
            f"(key) => ({_PANEL})(key).querySelector('.slice-input')", ["tensor", run, tag, rank]
        )
        box = handle.as_element()
        assert box is not None
        box.fill(text)
        box.press("Enter")

    # ---- histograms ------------------------------------------------------------------------
    def wait_histogram(self, tag: str, mode: str, after: int = 0) -> int:
        """Until the chart of ``tag`` is drawn in ``mode`` more than ``after`` times: its draws."""
        self.page.wait_for_function(
            f"""([tag, mode, after]) => {{ const card = ({_HIST})(tag);
                return card && card.dataset.mode === mode && card.dataset.state === 'ready'
                    && Number(card.dataset.draws) > after; }}""",
            arg=[tag, mode, after],
            timeout=WAIT_MS,
        )
        return int(self.page.evaluate(f"(tag) => ({_HIST})(tag).dataset.draws", tag))

    def histogram_traces(self, tag: str) -> list[dict[str, Any]]:
        """The chart's traces: run, rank, kind, step (of one step's curve), x and y."""
        return self.page.evaluate(
            f"""(tag) => ({_HIST})(tag).querySelector('.plot').data.map((t) => ({{
                run: t.meta.run ?? null, rank: t.meta.rank ?? null, kind: t.meta.kind,
                step: t.meta.step ?? null, x: Array.from(t.x ?? []),
                y: Array.from(t.y ?? []) }}))""",
            tag,
        )
