"""The run list in Chromium: what it lists, search, sort, selection, and 10,000 runs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import free_port, running_server, write_run
from helpers.board_data import RUN_IDS, get_json, wait_loaded
from helpers.board_page import BoardPage
from playwright.sync_api import Page

from sumlens.board.settings import BoardSettings

MANY = 10_000
ROW_HEIGHT = 36
"""Pixels per row (.run-row in runs/runs.css)."""
MAX_ROWS = 80
"""Row elements the table may hold at 1440x900 whatever the number of runs."""

_ROWS = """() => Object.fromEntries([...document.querySelectorAll('.run-row:not([hidden])')]
    .map((row) => [row.querySelector('.run-link').textContent, {
        scalars: row.querySelector('.scalars').textContent,
        status: row.querySelector('.status').textContent,
        ranks: row.querySelector('.ranks').textContent,
        warnings: [...row.querySelectorAll('.warnings .badge')].map((b) => b.textContent) }]))"""


def test_run_list_shows_the_golden_runs_and_ours(board: BoardPage) -> None:
    board.open()
    board.wait_runs_listed(RUN_IDS)
    rows = board.page.evaluate(_ROWS)
    api_runs = get_json(f"{board.url}/api/v1/runs")["runs"]
    for run in api_runs:
        row = rows[run["id"]]
        assert row["scalars"] == str(len(run["tags"].get("scalar", [])))
        assert row["status"] == run["status"]
        assert row["ranks"] == (", ".join(map(str, run["ranks"])) or "—")
    assert rows["./dist"]["ranks"] == "0, 1"
    assert rows["./ours/ms"]["scalars"] == "3"
    assert "damaged" in rows["./damaged"]["warnings"]
    assert "several trainings" in rows["./twice"]["warnings"]
    assert rows["./ours/ms"]["warnings"] == []
    board.screenshot("runs")

    search = board.page.locator(".runs-view .search-input")
    search.fill("OURS/")
    board.wait_row_count(2)
    assert board.listed_runs() == ["./ours/ms", "./ours/tb"]
    board.page.click(".regex-toggle")
    search.fill(r"^\./(all|coll)")
    board.wait_row_count(2)
    assert board.listed_runs() == ["./all_plugins", "./collector"]
    search.fill("")

    board.wait_row_count(len(api_runs))  # RUN_IDS and any run another test wrote
    ascending = board.listed_runs()
    board.page.locator(".sort", has_text="Run").click()
    board.page.wait_for_function(
        "(first) => document.querySelector('.run-row[data-index=\"0\"] .run-link').textContent"
        " !== first",
        arg=ascending[0],
    )
    assert board.listed_runs() == ascending[::-1]


_MODULES = """() => performance.getEntriesByType('resource')
    .map((entry) => entry.name.split('/').pop()).filter((name) => name.endsWith('.js'))"""
DEEP_VIEW_MODULES = {"images.js", "histograms.js", "tensors.js", "graph.js", "lineage.js",
                     "landscape.js"}  # fmt: skip


def test_views_load_their_modules_when_first_shown(board: BoardPage) -> None:
    board.open()
    board.wait_runs_listed(RUN_IDS)
    assert not DEEP_VIEW_MODULES & set(board.page.evaluate(_MODULES))
    board.page.locator("nav a[data-view=lineage]").click()
    board.page.wait_for_function("() => document.getElementById('lineage-view').children.length")
    loaded = set(board.page.evaluate(_MODULES))
    assert "lineage.js" in loaded
    assert not (DEEP_VIEW_MODULES - {"lineage.js"}) & loaded


def test_selected_runs_open_in_the_scalars_view(board: BoardPage) -> None:
    board.open()
    board.wait_runs_listed(["./ours/ms", "./dist"])
    board.page.get_by_label("Select ./ours/ms").check()
    board.page.get_by_label("Select ./dist").check()
    compare = board.page.locator(".compare")
    assert compare.text_content() == "Compare 2 runs in Scalars"
    compare.click()
    board.wait_drawn("loss")
    assert board.page.evaluate(
        "() => [...document.querySelectorAll('.run-legend .run-name')].map((e) => e.textContent)"
    ) == ["./ours/ms", "./dist"]
    assert board.page.locator("#scalars-view").is_visible()
    assert not board.page.locator("#runs-view").is_visible()
    board.page.go_back()  # the view change was a history entry
    board.page.locator("#runs-view").wait_for()
    assert not board.page.locator("#scalars-view").is_visible()
    assert board.page.locator(".compare").text_content() == "Compare 2 runs in Scalars"


@pytest.fixture(scope="module")
def many_runs_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server over 10,000 small runs (one 5-step file, hard-linked into each directory)."""
    root = tmp_path_factory.mktemp("many")
    write_run(root / "seed", range(1, 6))
    files = [path for path in (root / "seed").iterdir() if path.is_file()]
    base = root / "base"
    for i in range(MANY):
        run = base / f"run{i:05d}"
        run.mkdir(parents=True)
        for path in files:
            os.link(path, run / path.name)
    settings = BoardSettings.create(
        base, port=free_port(), reload_interval=2.0, workspace=root / "workspace"
    )
    with running_server(settings) as url:
        wait_loaded(url, ["./run00000", f"./run{MANY - 1:05d}"])
        yield url


@pytest.mark.slow
def test_ten_thousand_runs_stay_virtualised(
    page: Page, many_runs_url: str, artifacts: Path
) -> None:
    board = BoardPage(page, many_runs_url, artifacts)
    board.open()
    board.wait_runs_listed(["./run00000"])
    assert page.locator(".runs-view .count").text_content() == "10,000 of 10,000 runs"
    assert 0 < board.row_elements() <= MAX_ROWS
    board.screenshot("runs-10000")

    last = f"./run{MANY - 1:05d}"
    board.scroll_runs(1e9)
    board.wait_runs_listed([last])
    assert board.listed_runs()[-1] == last
    middle = "./run05000"
    board.scroll_runs(5000 * ROW_HEIGHT)
    board.wait_runs_listed([middle])
    assert 0 < board.row_elements() <= MAX_ROWS
    assert middle in board.listed_runs()

    page.locator(".runs-view .search-input").fill("run0999")
    board.wait_row_count(10)
    assert board.listed_runs() == [f"./run0999{i}" for i in range(10)]
