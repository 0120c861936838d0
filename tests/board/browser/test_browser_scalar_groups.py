"""Groups of runs in the Scalars view, in Chromium: 3 seeds x 2 learning rates
(:mod:`helpers.seed_groups`) grouped by the regex ``lr([0-9.]+)/seed\\d``.

The plotted centre lines and bands are compared with numpy on the values written: each
member smoothed with TensorBoard's EMA (``tb_ema``) at the page's smoothing, then the mean
and std over the members that have each step. The members are drawn faintly in their
group's colour, then hidden; the grouping survives a reload through the URL, and the
chart's download carries the groups' columns. A colour picked with a group's swatch
colours its band and centre line, after a reload too, until it goes back to automatic.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from helpers.board import tb_ema
from helpers.board_data import served_base
from helpers.board_page import BoardPage
from helpers.group_hparams import BY_LR, WITHOUT, write_hparams
from helpers.seed_groups import MEMBERS, REGEX, SINGLE, STEPS, grid, write_runs
from playwright.sync_api import Page

RUNS = [*MEMBERS["0.1"], *MEMBERS["0.01"], SINGLE]
SMOOTHING = 0.6  # the page's default
URL = "/scalars?" + "&".join(f"run={run}" for run in RUNS) + "&tags=^loss$"

# every trace of the loss chart: its kind, group (or run), colour, opacity and points
_TRACES = """() => document.querySelector('.card[data-tag="loss"] .plot').data.map((t) => ({
    kind: t.meta.kind, group: t.meta.group ?? null, run: t.meta.run,
    colour: t.line.color, opacity: t.opacity ?? 1, fill: t.fill ?? null,
    x: Array.from(t.x), y: Array.from(t.y) }))"""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("groups") / "base"
    write_runs(base)
    write_hparams(base)
    with served_base(base, tmp_path_factory.mktemp("ws"), RUNS) as served:
        yield served


@pytest.fixture
def board(page: Page, url: str, artifacts: Path) -> BoardPage:
    return BoardPage(page, url, artifacts)


def _traces(board: BoardPage) -> list[dict[str, Any]]:
    return board.page.evaluate(_TRACES)


def _expected(lr: str) -> tuple[np.ndarray, np.ndarray]:
    """Numpy's mean and std per step of group ``lr``, each member smoothed first."""
    _, table = grid(MEMBERS[lr], lambda values: tb_ema(values, SMOOTHING))
    columns = [column[np.isfinite(column)] for column in table.T]
    # the band: the sample standard deviation (every step has two members or more)
    return np.array([np.mean(c) for c in columns]), np.array([np.std(c, ddof=1) for c in columns])


def _group_by_regex(board: BoardPage, draws: int) -> int:
    board.page.select_option(".run-group-by", "regex")
    board.page.fill(".run-group-regex", REGEX)
    board.page.press(".run-group-regex", "Enter")
    board.page.wait_for_function(
        """() => document.querySelector('.card[data-tag="loss"]').dataset.groups === '2'"""
    )
    return board.wait_drawn("loss", after=draws)


def test_groups_draw_numpys_mean_and_band_and_survive_a_reload(board: BoardPage) -> None:
    board.open(URL)
    draws = _group_by_regex(board, board.wait_drawn("loss"))
    traces = _traces(board)
    for lr in MEMBERS:
        mean, std = _expected(lr)
        mine = {t["kind"]: t for t in traces if t["group"] == lr}
        assert set(mine) == {"group-center", "group-low", "group-high"}
        assert mine["group-center"]["x"] == list(range(1, STEPS + 1))
        np.testing.assert_allclose(mine["group-center"]["y"], mean, rtol=1e-12)
        np.testing.assert_allclose(mine["group-low"]["y"], mean - std, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(mine["group-high"]["y"], mean + std, rtol=1e-9, atol=1e-12)
        assert mine["group-high"]["fill"] == "tonexty"  # the band fills down to the low line
        colour = mine["group-center"]["colour"]
        members = [t for t in traces if t["kind"] == "member" and t["run"] in MEMBERS[lr]]
        assert len(members) == 3  # faint, in the group's colour
        assert all(t["colour"] == colour and t["opacity"] < 0.5 for t in members)
    centres = [t for t in traces if t["kind"] == "group-center"]
    assert centres[0]["colour"] != centres[1]["colour"]
    # the run no pattern matches is drawn as before
    assert [t["run"] for t in traces if t["kind"] == "smoothed"] == [SINGLE]
    note = board.page.locator('.card[data-tag="loss"] .card-note').inner_text()
    assert "2 groups (mean)" in note
    board.screenshot("scalars-groups")

    # the chart's download: the groups' columns at every step
    card = board.page.locator('.card[data-tag="loss"]')
    href = card.locator("a", has_text="CSV").get_attribute("href")
    assert href is not None and "scalars/groups/download" in href
    rows = board.page.request.get(href).text().splitlines()
    assert rows[0] == "group,tag,step,mean,mean-std,mean+std,members"
    assert len(rows) == 1 + 2 * STEPS

    # members hidden: only the groups and the single run remain
    board.page.locator(".run-group-members").click()
    draws = board.wait_drawn("loss", after=draws)
    assert not [t for t in _traces(board) if t["kind"] == "member"]
    fragment = urlsplit(board.page.url).fragment
    group = json.loads(parse_qs(fragment.split("?", 1)[1])["group"][0])
    assert group == {"by": "regex", "re": REGEX, "members": "hidden"}
    board.screenshot("scalars-groups-members-hidden")

    board.page.reload()
    board.page.wait_for_function(
        """() => document.querySelector('.card[data-tag="loss"]')?.dataset.groups === '2'"""
    )
    board.wait_drawn("loss")
    assert board.page.locator(".run-group-by").input_value() == "regex"
    assert board.page.locator(".run-group-regex").input_value() == REGEX
    assert board.page.locator(".run-group-members").get_attribute("aria-pressed") == "true"
    after = _traces(board)
    assert not [t for t in after if t["kind"] == "member"]
    assert [t["y"] for t in after if t["kind"] == "group-center"] == [
        t["y"] for t in traces if t["kind"] == "group-center"
    ]

    # faint again, then no groups: the runs as before
    board.page.locator(".run-group-members").click()
    board.page.wait_for_function(
        """() => document.querySelector('.card[data-tag="loss"] .plot').data
            .filter((t) => t.meta.kind === 'member').length === 6"""
    )
    board.page.select_option(".run-group-by", "")
    board.page.wait_for_function(
        """() => document.querySelector('.card[data-tag="loss"]').dataset.groups === '0'"""
    )
    kinds = {t["kind"] for t in _traces(board)}
    assert kinds == {"raw", "smoothed"}
    assert "group=" not in board.page.url


def test_runs_grouped_by_a_hyper_parameter(board: BoardPage) -> None:
    board.open(URL)
    draws = board.wait_drawn("loss")
    board.page.select_option(".run-group-by", "field")
    board.page.wait_for_function(
        "() => Number(document.querySelector('.run-group-field').dataset.fields) > 0"
    )
    offered = board.page.locator(".run-group-field option").all_inner_texts()
    assert {"hparam/lr", "hparam/seed", "hparam/opt"} <= set(offered)
    board.page.select_option(".run-group-field", "hparam/lr")
    board.page.wait_for_function(
        """() => document.querySelector('.card[data-tag="loss"]').dataset.groups === '2'"""
    )
    board.wait_drawn("loss", after=draws)
    traces = _traces(board)
    centres = {t["group"]: t for t in traces if t["kind"] == "group-center"}
    assert set(centres) == set(BY_LR)  # named "lr=0.1" by the field's label and value
    _, table = grid(BY_LR["lr=0.1"], lambda values: tb_ema(values, SMOOTHING))
    mean = [np.mean(column[np.isfinite(column)]) for column in table.T]
    np.testing.assert_allclose(centres["lr=0.1"]["y"], mean, rtol=1e-12)
    # the runs without the hyper-parameter are drawn as runs
    assert sorted(t["run"] for t in traces if t["kind"] == "smoothed") == sorted([WITHOUT, SINGLE])
    fragment = urlsplit(board.page.url).fragment
    group = json.loads(parse_qs(fragment.split("?", 1)[1])["group"][0])
    assert group == {"by": "field", "field": "hparam/lr"}
    board.screenshot("scalars-groups-by-field")

    board.page.reload()
    board.page.wait_for_function(
        """() => document.querySelector('.card[data-tag="loss"]')?.dataset.groups === '2'"""
    )
    board.page.wait_for_function(
        "() => document.querySelector('.run-group-field').value === 'hparam/lr'"
    )


# the band's fill and the centre line's colour of each group of the loss chart
_GROUP_LOOKS = """() => Object.fromEntries(document.querySelector('.card[data-tag="loss"] .plot')
    .data.filter((t) => t.meta.kind === 'group-high').map((t) => [t.meta.group,
    [t.fillcolor, document.querySelector('.card[data-tag="loss"] .plot').data.find((c) =>
        c.meta.kind === 'group-center' && c.meta.group === t.meta.group).line.color]]))"""
PICKED = "#aa3377"


def _wait_group_colour(board: BoardPage, group: str, colour: str) -> None:
    board.page.wait_for_function(
        f"""() => ({_GROUP_LOOKS})()[{json.dumps(group)}]?.[1] === {json.dumps(colour)}"""
    )


def test_a_picked_group_colour_colours_its_band_and_line(board: BoardPage) -> None:
    board.open(URL)
    _group_by_regex(board, board.wait_drawn("loss"))
    automatic = board.page.evaluate(_GROUP_LOOKS)
    assert set(automatic) == set(MEMBERS)
    swatch = board.page.locator('.group-colour[data-group="0.1"]')
    assert swatch.locator("input").input_value() == automatic["0.1"][1]
    assert not swatch.locator(".group-colour-reset").count()  # automatic: nothing to undo
    assert swatch.inner_text().strip() == "0.1"

    swatch.locator("input").evaluate(
        f"(input) => {{ input.value = '{PICKED}'; input.dispatchEvent(new Event('change')); }}"
    )
    _wait_group_colour(board, "0.1", PICKED)
    looks = board.page.evaluate(_GROUP_LOOKS)
    assert looks["0.1"] == [f"{PICKED}4d", PICKED]  # the band in it, faintly
    assert looks["0.01"] == automatic["0.01"]  # the other group keeps its own
    members = [t for t in _traces(board) if t["kind"] == "member" and t["run"] in MEMBERS["0.1"]]
    assert {t["colour"] for t in members} == {PICKED}
    board.screenshot("scalars-group-colour")

    board.page.reload()
    board.wait_drawn("loss")
    _wait_group_colour(board, "0.1", PICKED)
    swatch.locator(".group-colour-reset").wait_for()
    assert swatch.locator("input").input_value() == PICKED

    swatch.locator(".group-colour-reset").click()  # back to automatic (and a clean workspace)
    _wait_group_colour(board, "0.1", automatic["0.1"][1])
    swatch.locator(".group-colour-reset").wait_for(state="detached")
