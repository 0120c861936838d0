"""The run list's badges in Chromium: damage it used to hide, restarts that were not.

Untouched MindSpore runs carried a "replaced points" badge (MindSpore writes each epoch's
last step twice, with the same values): they carry none, while a run really resumed from
a checkpoint still does. A run with crafted values showed no damage: its badge now says
what was refused when it was indexed, and what was found when a value was read back.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import free_port, running_server, write_run
from helpers.board_data import get_json, wait_loaded
from helpers.board_page import BoardPage
from helpers.damage_data import CRAFTED_CORRUPT, write_crafted_run
from playwright.sync_api import Page

from sumlens.board.settings import BoardSettings

RUNS = ["./all_plugins", "./collector", "./landscape", "./resumed", "./crafted"]
_BADGES = """() => Object.fromEntries([...document.querySelectorAll('.run-row:not([hidden])')]
    .map((row) => [row.querySelector('.run-link').textContent,
        [...row.querySelectorAll('.warnings .badge')].map((b) => [b.textContent, b.title])]))"""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Iterator[str]:
    root = tmp_path_factory.mktemp("damage")
    base = root / "base"
    for name in ("all_plugins", "collector", "landscape"):
        shutil.copytree(golden_dir / name, base / name)
    write_run(base / "resumed", range(1, 101), value=lambda tag, step: 1.0)
    write_run(base / "resumed", range(61, 91), value=lambda tag, step: 2.0)  # from step 60
    write_crafted_run(base / "crafted")
    settings = BoardSettings.create(
        base, port=free_port(), workspace=root / "ws", reload_interval=0.5
    )
    with running_server(settings) as served:
        wait_loaded(served, RUNS)
        yield served


def _badges(board: BoardPage) -> dict[str, list[list[str]]]:
    board.open()
    board.wait_runs_listed(RUNS)
    return board.page.evaluate(_BADGES)


def test_untouched_mindspore_runs_carry_no_replaced_points(
    page: Page, url: str, artifacts: Path
) -> None:
    board = BoardPage(page, url, artifacts)
    badges = _badges(board)
    for run in ("./all_plugins", "./collector", "./landscape"):
        assert badges[run] == [], run
    assert [label for label, _ in badges["./resumed"]] == ["40 replaced points"]
    board.screenshot("runs_badges")


def test_damage_is_shown_in_the_run_list(page: Page, url: str, artifacts: Path) -> None:
    board = BoardPage(page, url, artifacts)
    ((label, tip),) = _badges(board)["./crafted"]
    assert label == "damaged" and f"{CRAFTED_CORRUPT} corrupt records" in tip
    assert "damaged value" not in tip
    answer = page.request.get(f"{url}/api/v1/tensor?run=./crafted&tag=t&step=5")
    assert answer.status == 422 and "is damaged" in answer.json()["detail"]
    listed = {run["id"]: run for run in get_json(f"{url}/api/v1/runs")["runs"]}
    assert listed["./crafted"]["damage"]["damaged_values"] == 1
    page.wait_for_function(  # the list follows the server (it polls for changes)
        """() => [...document.querySelectorAll('.run-row:not([hidden])')]
            .some((row) => row.querySelector('.run-link').textContent === './crafted'
                && row.querySelector('.warnings .badge')?.title.includes('1 damaged value'))"""
    )
    board.screenshot("runs_damage")
