"""Colours, bands and small words of the dashboard in Chromium (issue 40, item 9), over runs
SummaryRecord wrote: two groups of seeds and a run alone, each with two scalar tags.

* Two runs shown together never get colours that are hard to tell apart (blue and sky
  blue): the colours a run's name may land on are far apart (CIEDE2000), and so is each
  colour of the palette from the one before it.
* Grouped in the Scalars view, a group's colour is none of its members' (nor the lone
  run's), and a snapshot made from the view colours every group as the view does.
* The group band says which standard deviation it is (the sample one).
* The run dashboard shows no "null" beside "Add tags and a note".
* An x-axis tag that only falls with step is no "not monotonic" tag; one that rises and
  falls is said to.
"""

from __future__ import annotations

import itertools
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board_data import served_base
from helpers.board_page import WAIT_MS, BoardPage
from helpers.colour_difference import delta_e
from playwright.sync_api import Browser, Page

from sumlens import SummaryRecord

GROUPS = {"0.1": ["./lr0.1/seed1", "./lr0.1/seed2", "./lr0.1/seed3"],
          "0.01": ["./lr0.01/seed1", "./lr0.01/seed2", "./lr0.01/seed3"]}  # fmt: skip
ALONE = "./baseline"
RUNS = [*GROUPS["0.1"], *GROUPS["0.01"], ALONE]
REGEX = r"lr([0-9.]+)/seed\d"
STEPS = 20
APART = 35.0
"""CIEDE2000 two colours shown together must be apart at least (blue and sky blue: 22)."""

_SWATCHES = """() => {
    const hex = (css) => '#' + css.match(/\\d+/g).slice(0, 3)
        .map((c) => Number(c).toString(16).padStart(2, '0')).join('');
    return Object.fromEntries([...document.querySelectorAll(%r)].map((li) => [
        li.dataset.group ?? li.querySelector('.run-name').textContent,
        hex(getComputedStyle(li.querySelector('.swatch')).backgroundColor)]));
}"""
_CENTRES = """(selector) => Object.fromEntries([...document.querySelectorAll(selector)]
    .flatMap((plot) => plot.data).filter((t) => t.meta?.kind === 'group-center')
    .map((t) => [t.meta.group, t.line.color]))"""


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("colour-rules") / "base"
    for index, run in enumerate(RUNS):
        with SummaryRecord(base / run.removeprefix("./")) as record:
            for step in range(STEPS):
                record.add_value("scalar", "loss", 1.0 / (1 + step + index))
                record.add_value("scalar", "accuracy", step / STEPS - index / 100)
                if run == ALONE:
                    record.add_value("scalar", "budget", float(STEPS - step) ** 2)  # falls
                    record.add_value("scalar", "wave", float(step % 5))  # rises and falls
                record.record(step)
    return base


@pytest.fixture(scope="module")
def url(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_base(base, tmp_path_factory.mktemp("colour-rules-ws"), RUNS) as served:
        yield served


@pytest.fixture
def board(page: Page, url: str, artifacts: Path) -> BoardPage:
    return BoardPage(page, url, artifacts)


def _grouped_view(band: str = "std") -> str:
    grouping = {"by": "regex", "re": REGEX, "stat": "mean", "band": band}
    runs = "&".join(f"run={run}" for run in RUNS)
    return f"/scalars?{runs}&group={urllib.parse.quote(json.dumps(grouping))}"


def test_two_runs_never_get_colours_hard_to_tell_apart(board: BoardPage) -> None:
    board.open("/runs")
    found = board.page.evaluate(
        """async () => {
            const m = await import(new URL('static/widgets/colours.js', document.baseURI).href);
            const names = Array.from({ length: 60 }, (_, i) => `./sweep/lr${i / 100}_seed${i % 7}`);
            const pairs = [];
            for (let i = 0; i < names.length; i += 1) {
                for (let j = i + 1; j < names.length; j += 1) {
                    const colours = new m.Colours();
                    colours.assign([names[i], names[j]], new Map());
                    pairs.push([names[i], names[j], colours.style(names[i], null, false).colour,
                                colours.style(names[j], null, false).colour]);
                }
            }
            return { palette: m.PALETTE, pairs };
        }"""
    )
    palette = found["palette"]
    close = [(a, b, ca, cb) for a, b, ca, cb in found["pairs"] if delta_e(ca, cb) < APART]
    assert close == [], f"{len(close)} pairs of runs get colours hard to tell apart: {close[:3]}"
    used = {colour for *_, ca, cb in found["pairs"] for colour in (ca, cb)}
    for first, second in itertools.combinations(sorted(used), 2):
        assert delta_e(first, second) >= APART, (first, second)
    for first, second in itertools.pairwise(palette):
        assert delta_e(first, second) >= APART, (first, second)  # neighbours apart too


def _open_grouped(board: BoardPage) -> tuple[dict[str, str], dict[str, str]]:
    """The Scalars view of every run grouped by learning rate: the runs' colours (the
    legend's) and the groups' (their centre lines')."""
    board.open(_grouped_view())
    for tag in ("loss", "accuracy"):
        board.wait_drawn(tag)
    runs = board.page.evaluate(_SWATCHES % "#scalars-view .run-legend li")
    assert sorted(runs) == sorted(RUNS)
    return runs, board.page.evaluate(_CENTRES, "#scalars-view .card .plot")


def test_a_group_colour_is_none_of_its_runs(board: BoardPage) -> None:
    runs, groups = _open_grouped(board)
    assert sorted(groups) == sorted(GROUPS) and groups["0.1"] != groups["0.01"]
    for name, members in GROUPS.items():
        theirs = {runs[run] for run in [*members, ALONE]}
        assert groups[name] not in theirs, (name, groups[name], theirs)
    legend = [t for t in board.traces("loss") if t["kind"] == "group-center"]
    assert {t["name"] for t in legend} == {
        f"{name} (mean ± sample std, {len(members)})" for name, members in GROUPS.items()
    }
    board.screenshot("colour-rules-groups")


def test_a_snapshot_colours_groups_as_the_view(
    board: BoardPage, browser: Browser, tmp_path: Path
) -> None:
    runs, groups = _open_grouped(board)
    out = tmp_path / "snapshot.html"
    with board.page.expect_download() as download:
        board.page.get_by_role("link", name="Snapshot").click()
    download.value.save_as(out)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(WAIT_MS)
    snapshot = context.new_page()
    snapshot.goto(out.as_uri())
    snapshot.wait_for_selector("html[data-ready=true]", state="attached")
    for tag in ("loss", "accuracy"):
        snapshot.locator(f'.chart[data-tag="{tag}"]').scroll_into_view_if_needed()
        snapshot.wait_for_selector(f'.chart[data-tag="{tag}"] .main-svg')
    assert snapshot.evaluate(_SWATCHES % "ul.runs:not(.groups) li") == runs
    assert snapshot.evaluate(_SWATCHES % "li[data-group]") == groups
    assert snapshot.evaluate(_CENTRES, ".chart") == groups
    assert "± sample standard deviation (n - 1) band" in snapshot.inner_text("footer")
    context.close()


def test_the_run_dashboard_says_no_null(board: BoardPage) -> None:
    board.open(f"/run?run={ALONE}")
    annotation = board.page.locator(".dash-annotation")
    annotation.locator(".dash-edit-annotation").wait_for()
    assert annotation.inner_text().strip() == "Add tags and a note"
    assert "null" not in annotation.text_content()


def test_a_falling_x_tag_is_an_axis_one_that_rises_and_falls_is_said_to(
    board: BoardPage,
) -> None:
    for xtag, said in (
        ("budget", None),
        ("wave", "wave rises and falls with step (not monotonic): drawn in step order"),
    ):
        board.open(f"/scalars?run={ALONE}&tags=%5Eloss%24&xtag={xtag}")
        board.wait_drawn("loss")
        flag = board.page.locator('.card[data-tag="loss"] .chart-flag')
        if said is None:
            assert flag.is_hidden()
            x = next(t["x"] for t in board.traces("loss") if t["kind"] == "smoothed")
            assert x == [float(STEPS - step) ** 2 for step in range(STEPS)]  # in step order
        else:
            assert flag.inner_text() == said
