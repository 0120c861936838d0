"""The top bar and the run list's toolbar fit the window, in Chromium (issue 42's header).

Team mode put a Views menu, a badge, Sign out and an Audit link into the top bar, and four
buttons for the selected runs into the Runs toolbar. At 1440, 1280 and 1024 px wide, on a
local server (``auth none``: no badge) and signed in with a token as an admin (badge, Sign
out, Audit), every nav link shows whole: inside the window, not cut by the nav, nothing
over its centre; neither the nav, the bar nor the page scrolls sideways; every control of
the bar is in the window, the ones that gave way reachable in its "⋯" menu. With a run
selected, the Runs toolbar is one row at 1440 px and its controls never overlap.
Screenshots: ``header-<mode>-<width>.png`` in the tests' artifacts folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.board import free_port, running_server, write_run
from helpers.board_data import wait_loaded
from helpers.board_page import WAIT_MS
from helpers.team_page import TeamPage, wait_team_loaded, write_auth_files
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from sumlens.board.settings import BoardSettings

RUNS = ["./a", "./b", "./c"]
WIDTHS = [1440, 1280, 1024]
HEIGHT = 900

_NAV_PROBLEMS = """() => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  const height = document.documentElement.clientHeight;
  const nav = document.querySelector('.topbar nav');
  const bar = nav.getBoundingClientRect();
  for (const link of nav.querySelectorAll('a')) {
    if (link.hidden) { problems.push(`${link.textContent}: hidden from an admin`); continue; }
    const name = link.textContent;
    const box = link.getBoundingClientRect();
    if (!box.width || !box.height) problems.push(`${name}: not shown`);
    else if (box.left < 0 || box.right > width || box.top < 0 || box.bottom > height) {
      problems.push(`${name}: outside the window (${box.left}..${box.right} of ${width})`);
    } else if (box.left < bar.left - 0.5 || box.right > bar.right + 0.5) {
      problems.push(`${name}: cut by the nav (${box.right} > ${bar.right})`);
    } else if (link.scrollWidth > link.clientWidth) {
      problems.push(`${name}: its text cut (${link.scrollWidth} > ${link.clientWidth})`);
    } else {
      const hit = document.elementFromPoint((box.left + box.right) / 2, (box.top + box.bottom) / 2);
      const over = hit ? hit.outerHTML.slice(0, 80) : 'nothing';
      if (!link.contains(hit)) problems.push(`${name}: covered by ${over}`);
    }
  }
  const sideways = [['the nav', nav], ['the top bar', document.querySelector('.topbar')],
                    ['the page', document.documentElement], ['the body', document.body]];
  for (const [what, node] of sideways) {
    if (node.scrollWidth > node.clientWidth) {
      problems.push(`${what} scrolls sideways (${node.scrollWidth} > ${node.clientWidth})`);
    }
  }
  return problems;
}"""

_BAR_CONTROLS = """() => {
  const width = document.documentElement.clientWidth;
  return [...document.querySelectorAll('.topbar :is(button, summary, label, .badge, .base-dir)')]
    .filter((node) => node.checkVisibility())
    .map((node) => { const box = node.getBoundingClientRect();
      return { name: node.id || node.className || node.tagName,
               inside: box.left >= 0 && box.right <= width }; });
}"""

_TOOLBAR = """() => [...document.querySelectorAll('.run-toolbar > * > *')]
  .filter((node) => node.checkVisibility())
  .map((node) => { const box = node.getBoundingClientRect();
    return { name: node.className || node.tagName, left: box.left, right: box.right,
             top: box.top, bottom: box.bottom }; })"""


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Two servers over the same three runs: ``local`` (``auth none`` on 127.0.0.1, where
    everyone is an admin) and ``token`` (signing in the tokens of helpers.team_page)."""
    root = tmp_path_factory.mktemp("header")
    for run in RUNS:
        write_run(root / "base" / run[2:], range(1, 6))
    tokens, roles = write_auth_files(root / "auth")
    local = BoardSettings.create(root / "base", port=free_port(), workspace=root / "ws-local")
    team = BoardSettings.create(
        root / "base",
        port=free_port(),
        workspace=root / "ws-team",
        auth="token",
        token_file=tokens,
        roles_file=roles,
    )
    with running_server(local) as local_url, running_server(team) as team_url:
        wait_loaded(local_url, RUNS)
        wait_team_loaded(team_url, RUNS)
        yield {"local": local_url, "token": team_url}


def _open(page: Page, url: str, artifacts: Path, mode: str, width: int) -> TeamPage:
    """The run list at ``width`` x HEIGHT (as the admin ada in token mode), ./a selected."""
    page.set_viewport_size({"width": width, "height": HEIGHT})
    team = TeamPage(page, url, artifacts)
    if mode == "token":
        team.sign_in("ada")
    team.open("/runs")
    team.wait_session()
    team.wait_runs_listed(RUNS)
    if mode == "token":
        page.locator("#session").get_by_text("ada · admin").wait_for(state="attached")
    team.select("./a")
    page.locator(".run-actions .run-hide").wait_for()
    return team


def _whole_nav(page: Page) -> None:
    """Until every nav link shows whole (the bar fits itself a frame after a change);
    fails naming each link that does not, and how."""
    try:
        page.wait_for_function(f"() => ({_NAV_PROBLEMS})().length === 0", timeout=WAIT_MS)
    except PlaywrightTimeout:
        problems = page.evaluate(_NAV_PROBLEMS)
        pytest.fail("the nav does not fit:\n" + "\n".join(problems), pytrace=False)


def _rows(controls: list[dict[str, Any]]) -> int:
    """How many rows ``controls`` (boxes) make: a control crossing no earlier row's middle
    starts a new one."""
    middles: list[float] = []
    for box in sorted(controls, key=lambda box: box["top"]):
        if not any(box["top"] <= middle <= box["bottom"] for middle in middles):
            middles.append((box["top"] + box["bottom"]) / 2)
    return len(middles)


def _overlaps(controls: list[dict[str, Any]]) -> list[str]:
    """The pairs of ``controls`` whose boxes overlap."""
    return [
        f"{one['name']} / {two['name']}"
        for i, one in enumerate(controls)
        for two in controls[i + 1 :]
        if one["left"] < two["right"] - 0.5
        and two["left"] < one["right"] - 0.5
        and one["top"] < two["bottom"] - 0.5
        and two["top"] < one["bottom"] - 0.5
    ]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("mode", ["local", "token"])
def test_every_nav_link_shows_whole_and_nothing_scrolls_sideways(
    page: Page, servers: dict[str, str], artifacts: Path, mode: str, width: int
) -> None:
    team = _open(page, servers[mode], artifacts, mode, width)
    _whole_nav(page)
    assert page.locator("nav a[data-view=audit]").is_visible()  # an admin's link, both modes
    controls = page.evaluate(_BAR_CONTROLS)
    outside = [control["name"] for control in controls if not control["inside"]]
    assert not outside, f"top bar controls outside the window: {outside}"
    for always in (".saved-views > summary", "#refresh", "#theme-toggle"):
        assert page.locator(always).is_visible(), always
    if mode == "token":  # the badge in the bar, or in the menu of what gave way
        badge = page.locator(".topbar > #session")
        assert badge.is_visible() or page.locator(".topbar-more > summary").is_visible()
    team.screenshot(f"header-{mode}-{width}")


@pytest.mark.parametrize("mode", ["local", "token"])
def test_what_gives_way_is_in_the_more_menu(
    page: Page, servers: dict[str, str], artifacts: Path, mode: str
) -> None:
    team = _open(page, servers[mode], artifacts, mode, 1280)
    _whole_nav(page)
    more = page.locator(".topbar-more > summary")
    assert more.is_visible()
    more.click()
    panel = page.locator(".topbar-more-panel")
    assert panel.locator("#auto-refresh").is_visible()
    assert panel.locator("#base-dir").is_visible()
    if mode == "token":
        assert panel.locator("#session").inner_text().startswith("ada · admin")
        assert panel.locator(".session-sign-out").is_visible()
    else:
        assert panel.locator("#session").count() == 0  # alone on a local computer: no badge
    team.screenshot(f"header-{mode}-1280-more")
    page.set_viewport_size({"width": 1720, "height": HEIGHT})  # room again: all back home
    page.locator(".topbar-more").wait_for(state="hidden")
    assert page.locator(".topbar > .base-info").is_visible()
    assert page.locator(".topbar #auto-refresh").is_visible()


@pytest.mark.parametrize("mode", ["local", "token"])
def test_the_runs_toolbar_with_a_selection_is_one_row_at_1440_and_never_overlaps(
    page: Page, servers: dict[str, str], artifacts: Path, mode: str
) -> None:
    _open(page, servers[mode], artifacts, mode, 1440)
    for need in (".run-delete", ".trash-toggle", ".import-annotations", ".run-clear"):
        assert page.locator(f".run-toolbar {need}").is_visible(), need  # an admin's controls
    controls = page.evaluate(_TOOLBAR)
    assert _rows(controls) == 1, controls
    assert not _overlaps(controls)
    toolbar = page.locator(".run-toolbar")
    assert toolbar.evaluate("(node) => node.scrollWidth <= node.clientWidth")

    page.set_viewport_size({"width": 1280, "height": HEIGHT})
    controls = page.evaluate(_TOOLBAR)
    assert _rows(controls) <= 2, controls
    assert not _overlaps(controls), _overlaps(controls)
    assert toolbar.evaluate("(node) => node.scrollWidth <= node.clientWidth")
