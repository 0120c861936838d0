"""What a new user meets in the dashboard's first hour, in Chromium (issue 25, items 6, 7, 9
and 12's page parts).

Over the golden MindSpore runs (graphs, images), a run with the collector's scalar tags
beside its own, two runs of histograms kept at different steps, and enough runs of scalars
that the default selection has to pick: the Graph view's run picker follows the run shown
however it was chosen; with nothing selected, Scalars and Images show the most recent runs
and say so (10 of 10,000 too, asking for no more); histograms of two runs are a chart each
on one value axis, each with its step labels; plotly's zoom toast no longer covers the
Download links; the run dashboard previews the loss. Every wait is on a condition in the
page with a bound.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from helpers.board import free_port, linked_runs, running_server, write_run
from helpers.board_data import get_json, wait_loaded
from helpers.board_page import WAIT_MS, BoardPage
from helpers.graph_page import GraphPage
from playwright.sync_api import Page, Request

from sumlens import SummaryRecord
from sumlens.board.settings import BoardSettings

COLLECTOR_STYLE = ("accuracy", "epoch", "learning_rate/auto", "loss/auto")
"""A run's scalar tags: its own first by name, then what SummaryCollector writes."""
HISTOGRAM_STEPS = {"./hist/a": range(10, 401, 10), "./hist/b": range(5, 201, 5)}
EXTRA = [f"./extra/r{i}" for i in range(7)]
DEFAULT_RUNS = 10  # widgets/runsidebar.js DEFAULT_RUNS
MANY = 10_000
SCALAR_CARD = "#run-view .dash-card[data-plugin=scalar]"


def write_histograms(directory: Path, steps: range, shift: float) -> None:
    """A histogram ``w`` (normal values drifting with the step) and a scalar at ``steps``."""
    rng = np.random.default_rng(int(shift))
    with SummaryRecord(directory) as record:
        for step in steps:
            record.add_value("histogram", "w", rng.normal(shift + step / 100, 1 + shift, 500))
            record.add_value("scalar", "loss", 1 / step)
            record.record(step)


@pytest.fixture(scope="module")
def first_url(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Iterator[str]:
    """The server over the golden runs with graphs and images, and the runs written here."""
    root = tmp_path_factory.mktemp("first-hour")
    base = root / "base"
    for name in ("all_plugins", "collector"):
        shutil.copytree(golden_dir / name, base / name)  # kept files: their old times
    write_run(base / "tags", range(1, 31), tags=COLLECTOR_STYLE)
    for shift, (run, steps) in enumerate(HISTOGRAM_STEPS.items()):
        write_histograms(base / run[2:], steps, float(shift))
    for run in EXTRA:
        write_run(base / run[2:], range(1, 6))
    ids = ["./all_plugins", "./collector", "./tags", *HISTOGRAM_STEPS, *EXTRA]
    settings = BoardSettings.create(base, port=free_port(), workspace=root / "ws")
    with running_server(settings) as url:
        wait_loaded(url, ids)
        yield url


@pytest.fixture
def board(page: Page, first_url: str, artifacts: Path) -> BoardPage:
    return BoardPage(page, first_url, artifacts)


def hash_runs(page: Page) -> list[str]:
    """The runs the URL names, in order."""
    query = page.evaluate("location.hash").partition("?")[2]
    return parse_qs(query).get("run", [])


def scalar_requests(page: Page) -> list[list[str]]:
    """From now on, the runs of each /api/v1/scalars request the page sends (a live list)."""
    seen: list[list[str]] = []

    def on_request(request: Request) -> None:
        url = urlsplit(request.url)
        if url.path.endswith("/api/v1/scalars"):
            seen.append(parse_qs(url.query).get("run", []))

    page.on("request", on_request)
    return seen


def legend(page: Page, view: str) -> list[str]:
    """The run names of a view's sidebar, top to bottom."""
    return page.evaluate(
        """(view) => [...document.querySelectorAll(`#${view}-view .sidebar li`)]
            .map((li) => li.querySelector('.run-name, .legend-name').textContent)""",
        view,
    )


def most_recent(url: str, plugin: str, count: int) -> set[str]:
    """The ``count`` most recently updated runs holding ``plugin`` data, as /runs lists them."""
    runs = [run for run in get_json(f"{url}/api/v1/runs")["runs"] if run["tags"].get(plugin)]
    runs.sort(key=lambda run: (-run["updated"], run["id"]))
    return {run["id"] for run in runs[:count]}


# ---- item 6: the Graph view's run picker ---------------------------------------------------
def test_graph_run_picker_follows_the_run_shown(page: Page, first_url: str, artifacts: Path):
    graph = GraphPage(page, first_url, artifacts)
    drawn = graph.open_graph("./all_plugins")
    assert page.input_value(".graph-run") == "./all_plugins"
    page.locator("nav a[data-view=runs]").click()
    graph.wait_runs_listed(["./collector"])
    page.get_by_label("Training dashboard of ./collector").click()
    page.locator("#run-view .dash-card[data-plugin=graph] .open-view").click()
    drawn = graph.wait_drawing(after=drawn)
    assert hash_runs(page) == ["./collector"]
    assert page.input_value(".graph-run") == "./collector"  # not the run shown before

    page.select_option(".graph-run", "./all_plugins")
    graph.wait_drawing(after=drawn)
    assert page.input_value(".graph-run") == "./all_plugins"
    assert hash_runs(page) == ["./all_plugins"]  # the run shown, alone


# ---- item 7: nothing selected shows the most recent runs -----------------------------------
def test_scalars_show_the_most_recent_runs_when_none_is_selected(
    board: BoardPage, first_url: str
) -> None:
    requests = scalar_requests(board.page)
    board.open("/scalars")
    board.wait_drawn("loss")
    expected = most_recent(first_url, "scalar", DEFAULT_RUNS)
    assert len(expected) == DEFAULT_RUNS  # of 12: the golden runs are the oldest
    note = board.page.inner_text("#scalars-view .shown-note")
    assert f"the {DEFAULT_RUNS} most recently updated of 12 runs with scalars" in note
    assert board.page.get_attribute("#scalars-view .shown-note a", "href") == "#/runs"
    assert set(legend(board.page, "scalars")) == expected
    assert {trace["run"] for trace in board.traces("loss")} <= expected
    assert requests and all(set(runs) <= expected for runs in requests)
    assert hash_runs(board.page) == []  # nothing was selected for the user
    board.screenshot("scalars-none-selected")

    # taking one out of the view selects the others
    gone = sorted(expected)[0]
    board.page.get_by_label(f"Remove {gone}").click()
    board.page.wait_for_function("() => location.hash.includes('run=')")
    assert set(hash_runs(board.page)) == expected - {gone}
    assert board.page.locator("#scalars-view .shown-note").is_hidden()


def test_images_show_every_run_with_images_when_none_is_selected(board: BoardPage) -> None:
    board.open("/images")
    board.page.wait_for_function(
        """() => ['./all_plugins', './collector'].every((run) => [...document
            .querySelectorAll('#images-view .image-card')].some((card) =>
                card.dataset.run === run && card.dataset.state === 'ready'))""",
        timeout=WAIT_MS,
    )
    note = board.page.inner_text("#images-view .shown-note")
    assert "No runs selected: showing all 2 runs with images." in note
    assert sorted(legend(board.page, "images")) == ["./all_plugins", "./collector"]


@pytest.fixture(scope="module")
def many_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server over 10,000 runs of one 5-step file each (hard links: one file on disk)."""
    root = tmp_path_factory.mktemp("first-hour-many")
    write_run(root / "seed", range(1, 6))
    ids = linked_runs(root / "base", root / "seed", MANY)
    settings = BoardSettings.create(
        root / "base", port=free_port(), reload_interval=2.0, workspace=root / "ws"
    )
    with running_server(settings) as url:
        wait_loaded(url, [ids[0], ids[-1]])
        yield url


@pytest.mark.slow
def test_ten_thousand_runs_show_ten_and_ask_for_ten(
    page: Page, many_url: str, artifacts: Path
) -> None:
    board = BoardPage(page, many_url, artifacts)
    requests = scalar_requests(page)
    board.open("/scalars")
    board.wait_drawn("loss")
    note = page.inner_text("#scalars-view .shown-note")
    assert f"the {DEFAULT_RUNS} most recently updated of 10,000 runs with scalars" in note
    shown = legend(page, "scalars")
    assert len(shown) == DEFAULT_RUNS
    assert len({trace["run"] for trace in board.traces("loss")}) == DEFAULT_RUNS
    assert requests and all(len(runs) <= DEFAULT_RUNS for runs in requests)
    assert all(set(runs) <= set(shown) for runs in requests)


# ---- item 9: a chart per run in the offset mode --------------------------------------------
_FIGURE = """() => {
    const plot = document.querySelector('.histogram-card[data-tag="w"] .plot');
    const axes = Object.keys(plot.layout).filter((key) => /^yaxis\\d*$/.test(key));
    const ticks = (key) => [...plot.querySelectorAll(`.${key.replace('axis', '')}tick text`)]
        .map((t) => t.textContent);
    return {
        traces: plot.data.map((t) => ({ run: t.meta.run, step: t.meta.step,
            xaxis: t.xaxis ?? 'x', yaxis: t.yaxis ?? 'y', x: [t.x[0], t.x[t.x.length - 1]] })),
        axes: Object.fromEntries(axes.map((key) => [key, {
            domain: plot.layout[key].domain, tickvals: plot.layout[key].tickvals ?? null,
            ticks: ticks(key) }])),
        labels: (plot.layout.annotations ?? []).map((a) => a.text),
        height: plot.getBoundingClientRect().height,
    };
}"""


def test_histograms_of_two_runs_are_a_chart_each(board: BoardPage) -> None:
    runs = list(HISTOGRAM_STEPS)
    board.open("/histograms?run=./hist/a&run=./hist/b")
    board.page.wait_for_function(
        """() => { const card = document.querySelector('.histogram-card[data-tag="w"]');
            return card && card.dataset.state === 'ready' && card.dataset.mode === 'offset'; }""",
        timeout=WAIT_MS,
    )
    figure: dict[str, Any] = board.page.evaluate(_FIGURE)
    axis_of = {run: {t["yaxis"] for t in figure["traces"] if t["run"] == run} for run in runs}
    assert all(len(axes) == 1 for axes in axis_of.values()), axis_of  # each run on its own
    (first,), (second,) = axis_of.values()
    assert first != second
    assert figure["labels"] == runs  # each chart named
    # aligned: one value axis, every ridge over the same range
    assert {t["xaxis"] for t in figure["traces"]} == {"x"}
    assert len({tuple(t["x"]) for t in figure["traces"]}) == 1
    domains = sorted(axis["domain"] for axis in figure["axes"].values())
    assert domains[0][1] < domains[1][0]  # stacked, not overlapping
    for run, (axis,) in axis_of.items():
        key = axis.replace("y", "yaxis", 1)
        steps = {t["step"] for t in figure["traces"] if t["run"] == run}
        assert steps == set(HISTOGRAM_STEPS[run])  # every kept step, on its own chart
        spec = figure["axes"][key]
        assert spec["tickvals"] and set(spec["tickvals"]) <= steps
        assert spec["ticks"] == [str(step) for step in spec["tickvals"]]  # its step labels
    assert figure["height"] > 2 * 200  # room for both
    board.screenshot("histograms-two-runs")


# ---- item 12 (page parts) ------------------------------------------------------------------
def test_zoom_leaves_the_download_links_free(board: BoardPage) -> None:
    board.open("/scalars?run=./tags&tags=^loss")
    board.wait_drawn("loss/auto")
    drag = board.page.locator('.card[data-tag="loss/auto"] .nsewdrag').bounding_box()
    assert drag is not None
    y = drag["y"] + drag["height"] / 2
    board.page.mouse.move(drag["x"] + drag["width"] * 0.2, y)
    board.page.mouse.down()
    board.page.mouse.move(drag["x"] + drag["width"] * 0.5, y, steps=5)
    board.page.mouse.up()  # a real drag: plotly zooms and would say how to zoom back out
    board.page.wait_for_function("() => location.hash.includes('zoom=')", timeout=WAIT_MS)
    # the zoomed range loads after the address changes; the card says so once it is drawn
    board.page.wait_for_function(
        """() => document.querySelector('.card[data-tag="loss/auto"] .card-note')
            ?.textContent.includes('double-click to show all')""",
        timeout=WAIT_MS,
    )
    covered = board.page.evaluate(
        """() => [...document.querySelectorAll('#scalars-view a[download]')].filter((link) => {
            const box = link.getBoundingClientRect();
            const top = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
            return !link.contains(top);
        }).map((link) => link.title)"""
    )
    assert covered == []
    assert board.page.locator(".plotly-notifier").count() == 0  # the card says it instead


def test_run_dashboard_previews_the_loss(board: BoardPage) -> None:
    board.open("/run?run=./tags")
    board.page.wait_for_function(
        f"() => document.querySelector('{SCALAR_CARD}')?.dataset.state === 'ready'",
        timeout=WAIT_MS,
    )
    tags = board.page.evaluate(
        f"""() => [...document.querySelectorAll('{SCALAR_CARD} .dash-plot')]
            .flatMap((div) => div.sketch.data.map((trace) => trace.meta.tag))"""
    )
    assert sorted(set(tags)) == ["learning_rate/auto", "loss/auto"]  # not accuracy, epoch
    note = board.page.inner_text(f"{SCALAR_CARD} .card-note")
    assert note == "2 of 4 tags shown."


# ---- the sidebar's note while nothing is selected ------------------------------------------
NOTE_RUNS = [f"./note/r{i:02d}" for i in range(DEFAULT_RUNS)]
OLD_MTIME = 1_000_000_000  # 2001: older than every run the test writes


@pytest.fixture(scope="module")
def note_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("first-hour-note") / "base"


@pytest.fixture(scope="module")
def note_url(note_base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server over DEFAULT_RUNS runs of scalars, one of them the only run of histograms."""
    for run in NOTE_RUNS[1:]:
        write_run(note_base / run[2:], range(1, 4))
    write_histograms(note_base / NOTE_RUNS[0][2:], range(1, 4), 0.0)
    settings = BoardSettings.create(
        note_base,
        port=free_port(),
        reload_interval=0.5,
        workspace=tmp_path_factory.mktemp("first-hour-note-ws"),
    )
    with running_server(settings) as url:
        wait_loaded(url, NOTE_RUNS)
        yield url


def test_the_note_follows_the_state_and_the_runs_listed(
    page: Page, note_url: str, note_base: Path, artifacts: Path
) -> None:
    board = BoardPage(page, note_url, artifacts)
    board.open("/histograms")
    only = "#histograms-view .shown-note"
    page.wait_for_function(f"() => document.querySelector('{only}')?.hidden === false")
    assert "showing the only run with histograms" in page.inner_text(only)
    # taking the only run shown out would select nothing, which shows it again: no button
    assert page.locator("#histograms-view").get_by_label(f"Remove {NOTE_RUNS[0]}").count() == 0

    board.open("/scalars")
    board.wait_drawn("loss")
    note = "#scalars-view .shown-note"
    assert f"showing all {DEFAULT_RUNS} runs with scalars" in page.inner_text(note)
    page.locator("#scalars-view [data-axis=relative]").click()  # no new runs shown
    page.wait_for_function("() => location.hash.includes('axis=relative')")
    edit = page.get_attribute("#scalars-view .sidebar-head a", "href")
    assert edit == "#/runs?axis=relative"
    assert page.get_attribute(f"{note} a", "href") == edit  # "Choose runs" keeps the state

    # a run older than the ten shown: not shown, but among the runs with scalars
    old = note_base.parent / "old"
    write_run(old, range(1, 4))
    for path in old.iterdir():
        os.utime(path, (OLD_MTIME, OLD_MTIME))
    old.rename(note_base / "old")
    page.wait_for_function(
        f"""() => document.querySelector('{note}').textContent.includes(
            'the {DEFAULT_RUNS} most recently updated of {DEFAULT_RUNS + 1} runs')""",
        timeout=WAIT_MS,
    )
    assert "./old" not in legend(page, "scalars")
