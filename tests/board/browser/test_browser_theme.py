"""Dark mode in real Chromium: every view turns dark, charts included, and the toggle sticks.

The page follows the system's setting (emulated with ``prefers-color-scheme``) until the top
bar's toggle picks a theme, which is kept in localStorage. Each view is opened in the dark
theme, screenshotted (``artifacts/dark-<view>.png``) and checked: the page's background, every
plotly chart's paper and plot, and no element of the view painted with a light background.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from helpers.board_page import WAIT_MS, BoardPage
from playwright.sync_api import Page

# What each view shows once it is drawn (a selector inside its section).
_VIEWS = [
    ("runs", "/runs", ".run-row"),
    ("scalars", "/scalars?run=./ours/ms&run=./ours/tb", ".js-plotly-plot .main-svg"),
    ("images", "/images", ".pcard"),
    ("histograms", "/histograms", ".js-plotly-plot .main-svg"),
    ("tensors", "/tensors", ".pcard"),
    ("pr_curves", "/pr_curves", ".pcard, .empty-note"),
    ("embeddings", "/embeddings", ".pcard, .empty-note"),
    ("text", "/text", ".pcard, .empty-note"),
    ("audio", "/audio", ".pcard, .empty-note"),
    ("graph", f"/graph?run={quote('./all_plugins')}", ".graph-world [data-kind]"),
    ("lineage", "/lineage", ".lin-row"),
    ("landscape", f"/landscape?run={quote('./landscape', safe='')}", ".land-panel .main-svg"),
    ("run", f"/run?run={quote('./ours/ms', safe='')}", "svg.sketch"),
]

# Luminance (0 black .. 1 white) of a CSS colour (any syntax: the browser normalises it) and
# its alpha; a page's light parts are over LIGHT.
_LUMINANCE = """(given) => {
    const probe = document.createElement('i');
    probe.style.color = given;
    document.body.append(probe);
    const css = getComputedStyle(probe).color;
    probe.remove();
    const m = css.match(/rgba?\\(([\\d.]+)[, ]+([\\d.]+)[, ]+([\\d.]+)(?:[,/ ]+([\\d.]+))?/);
    if (!m) return null;
    const [r, g, b] = [m[1], m[2], m[3]].map(Number);
    const alpha = m[4] === undefined ? 1 : Number(m[4]);
    return { value: (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255, alpha };
}"""
_LIGHT = 0.5

# The elements of a view painted light: opaque enough to see, neither an image nor a swatch,
# nor the accent colour (light blue in the dark theme: a primary button, under dark text).
_LIGHT_PARTS = f"""(view) => {{
    const luminance = {_LUMINANCE};
    const probe = document.createElement('i');
    probe.style.background = 'var(--accent)';
    document.body.append(probe);
    const accent = getComputedStyle(probe).backgroundColor;
    probe.remove();
    const out = [];
    for (const e of document.querySelectorAll(`#${{view}}-view *`)) {{
        if (!e.getClientRects().length || e.closest('.swatch, img, canvas, audio')) continue;
        const background = getComputedStyle(e).backgroundColor;
        const paint = luminance(background);
        if (background !== accent && paint && paint.alpha > 0.5 && paint.value > {_LIGHT}) {{
            out.push(`${{e.tagName.toLowerCase()}}.${{e.className.baseVal ?? e.className}}`);
        }}
    }}
    return out;
}}"""

# Every plotly chart of the page: its paper and plot colours as plotly drew them.
_CHART_PAPERS = """() => [...document.querySelectorAll('.js-plotly-plot')]
    .filter((d) => d._fullLayout && d.getClientRects().length)
    .map((d) => [d._fullLayout.paper_bgcolor, d._fullLayout.plot_bgcolor ?? null])"""
"""[paper, plot] per chart shown; plot is null for a 3-D chart (its scene has no plot area)."""


def _luminance(page: Page, css: str) -> float:
    return page.evaluate(f"(css) => ({_LUMINANCE})(css).value", css)


def _page_background(page: Page) -> str:
    return page.evaluate("() => getComputedStyle(document.documentElement).backgroundColor")


def _open_view(board: BoardPage, name: str, fragment: str, shows: str) -> None:
    board.open(fragment)
    board.page.wait_for_function(
        "([view, sel]) => document.querySelector(`#${view}-view:not([hidden]) :is(${sel})`)",
        arg=[name, shows],
        timeout=WAIT_MS,
    )


@pytest.mark.parametrize(("name", "fragment", "shows"), _VIEWS, ids=[v[0] for v in _VIEWS])
def test_dark_mode_turns_every_view_dark(
    board: BoardPage, artifacts: Path, name: str, fragment: str, shows: str
) -> None:
    page = board.page
    page.emulate_media(color_scheme="dark")
    _open_view(board, name, fragment, shows)
    board.page.wait_for_load_state("load")
    assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
    board.screenshot(f"dark-{name}")

    assert _luminance(page, _page_background(page)) < 0.15
    for paper, plot in page.evaluate(_CHART_PAPERS):
        assert _luminance(page, paper) < 0.2, (name, paper)
        assert plot is None or _luminance(page, plot) < 0.2, (name, plot)
    assert page.evaluate(_LIGHT_PARTS, name) == []


def test_the_toggle_switches_and_is_kept_across_a_reload(board: BoardPage) -> None:
    page = board.page
    page.emulate_media(color_scheme="light")
    _open_view(board, "scalars", "/scalars?run=./ours/ms", ".js-plotly-plot .main-svg")
    assert page.evaluate("() => document.documentElement.dataset.theme") == "light"
    assert _luminance(page, _page_background(page)) > 0.8
    toggle = page.locator("#theme-toggle")
    assert toggle.get_attribute("aria-pressed") == "false"

    toggle.click()  # the chart already drawn turns dark in place, without a reload
    page.wait_for_function(
        """() => [...document.querySelectorAll('#scalars-view .js-plotly-plot')]
            .every((d) => d._fullLayout.paper_bgcolor !== 'rgb(255, 255, 255)'
                          && d._fullLayout.paper_bgcolor !== '#ffffff')""",
        timeout=WAIT_MS,
    )
    assert toggle.get_attribute("aria-pressed") == "true"
    assert _luminance(page, _page_background(page)) < 0.15
    for paper, _plot in page.evaluate(_CHART_PAPERS):
        assert _luminance(page, paper) < 0.2
    assert page.evaluate("() => localStorage.getItem('sumlens.theme')") == "dark"

    page.reload()  # the choice outlives the page, though the system is still light
    page.wait_for_selector("#scalars-view .js-plotly-plot .main-svg")
    assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
    for paper, _plot in page.evaluate(_CHART_PAPERS):
        assert _luminance(page, paper) < 0.2

    page.locator("#theme-toggle").click()  # back to the system's theme: following it again
    assert page.evaluate("() => document.documentElement.dataset.theme") == "light"
    assert page.evaluate("() => localStorage.getItem('sumlens.theme')") is None
    page.emulate_media(color_scheme="dark")
    page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
