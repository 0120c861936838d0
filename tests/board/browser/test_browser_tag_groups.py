"""The Scalars view of a run of 2,000 tags in Chromium: tags grouped by prefix.

A run SummaryRecord wrote with 2,000 scalar tags under 20 prefixes (``g00/t000`` ...) over
a few steps. The page lists the 20 groups with their counts; only the first groups are
open, a collapsed group holds no card, and only the charts on the first screen are drawn;
a click opens or closes a group; a regex filter opens the groups it matches; the groups
opened and closed by hand are the same after a reload.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board_data import served_base
from helpers.board_page import WAIT_MS, BoardPage
from playwright.sync_api import Page

from sumlens import SummaryRecord

PREFIXES = 20
PER_PREFIX = 100
STEPS = 3
URL = "/scalars?run=./wide"
FILTER = 'input[aria-label="Filter tags (regular expression)"]:visible'

GROUPS_JS = """() => [...document.querySelectorAll('.prefix-group')].map((g) => ({
    prefix: g.dataset.prefix, open: g.dataset.open === 'true',
    count: g.querySelector('.group-count').textContent,
    cards: g.querySelectorAll('.card').length }))"""
DRAWN_JS = "() => document.querySelectorAll('.card .plot .main-svg').length"
FETCHES_JS = """() => performance.getEntriesByType('resource')
    .filter((e) => e.name.includes('/api/v1/scalars?')).length"""


def _prefix(i: int) -> str:
    return f"g{i:02d}"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("taggroups") / "base"
    with SummaryRecord(base / "wide") as record:
        for step in range(STEPS):
            for p in range(PREFIXES):
                for t in range(PER_PREFIX):
                    record.add_value("scalar", f"{_prefix(p)}/t{t:03d}", float(p + t + step))
            record.record(step)
    return base


@pytest.fixture(scope="module")
def url(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_base(base, tmp_path_factory.mktemp("ws"), ["./wide"]) as served:
        yield served


@pytest.fixture
def board(page: Page, url: str, artifacts: Path) -> BoardPage:
    return BoardPage(page, url, artifacts)


def _groups(board: BoardPage) -> dict[str, dict]:
    return {g["prefix"]: g for g in board.page.evaluate(GROUPS_JS)}


def _wait_groups(board: BoardPage, check: str, arg: object = None) -> None:
    """Until ``check`` (a JS function of the groups list and ``arg``) holds."""
    board.page.wait_for_function(
        f"(arg) => ({check})(({GROUPS_JS})(), arg)", arg=arg, timeout=WAIT_MS
    )


def _toggle(board: BoardPage, prefix: str) -> None:
    board.page.locator(f'.prefix-group[data-prefix="{prefix}"] .group-toggle').click()


def test_groups_listed_collapsed_and_only_first_screen_drawn(board: BoardPage) -> None:
    board.open(URL)
    _wait_groups(board, f"(groups) => groups.length === {PREFIXES}")
    groups = _groups(board)
    assert list(groups) == [_prefix(p) for p in range(PREFIXES)]
    assert {g["count"] for g in groups.values()} == {str(PER_PREFIX)}
    # the first group opens (it alone fills the default budget), with a first page of cards
    assert groups["g00"]["open"]
    assert 0 < groups["g00"]["cards"] < PER_PREFIX
    assert not any(g["open"] or g["cards"] for p, g in groups.items() if p != "g00")
    board.wait_drawn("g00/t000")
    board.page.wait_for_function(
        "() => [...document.querySelectorAll('.card')].slice(0, 3)"
        ".every((c) => c.dataset.state === 'ready')",
        timeout=WAIT_MS,
    )
    drawn = board.page.evaluate(DRAWN_JS)
    assert 0 < drawn < 20, f"{drawn} charts drawn: more than the first screen"
    assert board.page.evaluate(FETCHES_JS) < 20
    board.screenshot("tag-groups")


def test_expand_collapse_and_reload(board: BoardPage) -> None:
    board.open(URL)  # a fresh browser context: nothing remembered yet
    _wait_groups(board, f"(groups) => groups.length === {PREFIXES}")
    _toggle(board, "g00")  # close the first
    _toggle(board, "g07")  # open another
    _wait_groups(
        board,
        "(groups) => !groups[0].open && groups[0].cards === 0 && groups[7].open && groups[7].cards",
    )
    board.page.locator('.card[data-tag="g07/t000"]').scroll_into_view_if_needed()
    board.wait_drawn("g07/t000")
    # the open group of 100 tags shows a page of cards; scrolling to its end shows more
    first = _groups(board)["g07"]["cards"]
    assert first < PER_PREFIX
    board.page.locator('.prefix-group[data-prefix="g07"] .group-more').scroll_into_view_if_needed()
    _wait_groups(board, "(groups, n) => groups[7].cards > n", first)
    board.page.reload()
    _wait_groups(board, f"(groups) => groups.length === {PREFIXES}")
    groups = _groups(board)
    assert not groups["g00"]["open"] and groups["g00"]["cards"] == 0
    assert groups["g07"]["open"] and groups["g07"]["cards"] > 0
    board.screenshot("tag-groups-collapsed")


def test_filter_opens_matching_groups(board: BoardPage) -> None:
    board.open(URL)
    _wait_groups(board, f"(groups) => groups.length === {PREFIXES}")
    board.page.fill(FILTER, "^g1[23]/t00[0-4]$")
    _wait_groups(board, "(groups) => groups.length === 2 && groups.every((g) => g.open)")
    groups = _groups(board)
    assert {p: (g["count"], g["cards"]) for p, g in groups.items()} == {
        "g12": ("5", 5),
        "g13": ("5", 5),
    }
    board.wait_drawn("g12/t000")
    assert board.page.locator(f"{FILTER} >> xpath=../..").locator(".count").text_content() == (
        "10 of 2,000 tags"
    )
    board.screenshot("tag-groups-filtered")
    # a click closes a matching group while the filter holds
    _toggle(board, "g12")
    _wait_groups(board, "(groups) => !groups[0].open && groups[0].cards === 0")
    board.page.fill(FILTER, "")
    _wait_groups(board, f"(groups) => groups.length === {PREFIXES}")
