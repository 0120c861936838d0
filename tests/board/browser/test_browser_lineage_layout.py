"""The Lineage view's layout with eight runs, in Chromium (issue 25, item 10).

Over the golden MindSpore runs, runs our writer made at three learning rates and two runs
SummaryCollector recorded while training: the parallel coordinates name every axis in one
row, with no name, tick or category over another; every column of the table can be
brought into view, the run's name staying beside it; the Columns popover closes on Escape,
on a press outside it and when the Data lineage tab is shown. Every wait is on a condition
in the page with a bound.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import free_port, get_json, running_server, wait_until
from helpers.board_page import WAIT_MS, BoardPage
from helpers.collector_runs import COLLECTOR_RATES, write_collector_runs
from helpers.lineage_data import GOLDEN, WRITTEN, lineage_ready, write_lineage_run
from playwright.sync_api import Page

from sumlens.board.settings import BoardSettings

RUNS = [*GOLDEN, *WRITTEN, *COLLECTOR_RATES]
ROWS = ".lin-row:not([hidden])"
PANEL = ".lin-columns-panel"
_LABELS = """() => [...document.querySelectorAll('.lin-pc-name, .lin-pc-tick')].map((e) => {
    const box = e.getBoundingClientRect();
    return { kind: e.classList.contains('lin-pc-name') ? 'name' : 'tick', col: e.dataset.col,
        end: e.dataset.end ?? null, text: e.textContent, title: e.title, left: box.left,
        right: box.right, top: box.top, bottom: box.bottom };
})"""


@pytest.fixture(scope="module")
def eight_url(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Iterator[str]:
    """The server over the eight runs of ``RUNS``."""
    root = tmp_path_factory.mktemp("lineage-layout")
    base = root / "base"
    for run in GOLDEN:
        shutil.copytree(golden_dir / run[2:], base / run[2:])
    for run, (rate, accuracy, batch) in WRITTEN.items():
        write_lineage_run(base / run[2:], rate, accuracy, batch)
    write_collector_runs(base)
    settings = BoardSettings.create(base, port=free_port(), workspace=root / "ws")
    with running_server(settings) as url:
        wait_until(lambda: lineage_ready(url, RUNS), timeout=60)
        yield url


@pytest.fixture
def lineage(page: Page, eight_url: str, artifacts: Path) -> BoardPage:
    board = BoardPage(page, eight_url, artifacts)
    board.open("/lineage")
    page.wait_for_function(
        f"""(n) => document.querySelectorAll('{ROWS}').length === n
            && document.querySelectorAll('.lin-pc-name').length > 0""",
        arg=len(RUNS),
        timeout=WAIT_MS,
    )
    return board


def overlapping(boxes: list[dict]) -> list[tuple[str, str]]:
    """The pairs of label boxes that overlap (by more than half a pixel each way)."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            wide = min(a["right"], b["right"]) - max(a["left"], b["left"])
            high = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
            if wide > 0.5 and high > 0.5:
                found.append((a["text"], b["text"]))
    return found


def significant_digits(text: str) -> int:
    """How many significant digits a number's text shows ("0.05807" has 4, "60000" 1)."""
    mantissa = re.sub(r"e.*$", "", text.lstrip("-"))
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits if "." in mantissa else digits.rstrip("0"))


def test_parallel_coordinates_labels_never_overlap(lineage: BoardPage, eight_url: str) -> None:
    labels = lineage.page.evaluate(_LABELS)
    names = [label for label in labels if label["kind"] == "name"]
    columns = {c["id"]: c["label"] for c in get_json(f"{eight_url}/api/v1/lineage")["columns"]}
    assert len(names) >= 8
    assert max(n["top"] for n in names) - min(n["top"] for n in names) < 1  # one row
    for name in names:  # a name may be cut short on screen, never on hover
        assert name["title"].startswith(columns[name["col"]])
    assert overlapping(labels) == []
    ends = [label["text"] for label in labels if label["end"]]  # a number axis' min and max
    assert ends and all(significant_digits(text) <= 4 for text in ends), ends
    chart = lineage.page.locator(".lin-pc-stage").bounding_box()
    assert chart is not None
    for label in labels:  # inside the chart
        assert chart["x"] - 0.5 <= label["left"] and label["right"] <= chart["x"] + chart["width"]
    lineage.page.wait_for_function(
        "() => Number(document.querySelector('.lin-scatter-plot').dataset.draws) > 0",
        timeout=WAIT_MS,
    )
    lineage.screenshot("lineage-8-runs")


def test_every_table_column_can_be_brought_into_view(lineage: BoardPage) -> None:
    page = lineage.page
    table = page.locator(".lin-table")
    cue = page.locator(".lin-table-box .side-cue-right")
    more = "(t) => t.scrollWidth - t.clientWidth - t.scrollLeft > 1"  # columns to the right
    if table.evaluate(more):  # the table says it scrolls sideways, and scrolls when asked
        assert cue.is_visible()
        for _ in range(20):
            if not table.evaluate(more):
                break
            end = table.evaluate(
                "(t) => Math.min(t.scrollLeft + 0.8 * t.clientWidth, t.scrollWidth - t.clientWidth)"
            )
            cue.click()
            page.wait_for_function(
                "(end) => document.querySelector('.lin-table').scrollLeft >= end - 1",
                arg=end,
                timeout=WAIT_MS,
            )
        cue.wait_for(state="hidden")  # at the right end
    box = table.bounding_box()
    assert box is not None
    heads = page.evaluate(
        """() => [...document.querySelectorAll('.lin-head .lin-th')].map((cell) => {
            const r = cell.getBoundingClientRect();
            const top = document.elementFromPoint(r.left + 4, r.top + r.height / 2);
            return { col: cell.dataset.col, left: r.left, right: r.right,
                seen: cell.contains(top) }; })"""
    )
    last, run = heads[-1], heads[0]
    assert run["col"] == "run" and run["seen"]  # the run's name stays in view
    assert last["right"] <= box["x"] + box["width"] + 0.5 and last["seen"]
    # the table is as tall as its rows: no sideways scroll bar far below them
    rows_bottom = page.evaluate(
        f"() => Math.max(...[...document.querySelectorAll('{ROWS}')]"
        ".map((r) => r.getBoundingClientRect().bottom))"
    )
    assert box["y"] + box["height"] - rows_bottom < 24
    lineage.screenshot("lineage-8-runs-table-right")


def test_columns_popover_closes_like_a_popover(lineage: BoardPage) -> None:
    page = lineage.page
    button = page.locator(".lin-columns-button")
    button.click()
    page.locator(PANEL).wait_for(state="visible")
    assert button.get_attribute("aria-expanded") == "true"
    page.keyboard.press("Escape")
    page.locator(PANEL).wait_for(state="hidden")
    assert button.get_attribute("aria-expanded") == "false"

    button.click()
    page.locator(PANEL).wait_for(state="visible")
    page.locator(".lin-chart-title").click()  # anywhere outside
    page.locator(PANEL).wait_for(state="hidden")

    button.click()
    page.locator(PANEL).wait_for(state="visible")
    page.locator(".lin-toolbar button[data-tab=data]").click()
    page.wait_for_function("() => location.hash.includes('data')", timeout=WAIT_MS)
    assert page.locator(PANEL).is_hidden()
    page.locator(".lin-toolbar button[data-tab=model]").click()  # and it stays closed
    button.wait_for(state="visible")
    assert page.locator(PANEL).is_hidden()
