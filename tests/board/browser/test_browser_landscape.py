"""The loss landscape view in Chromium (software WebGL: the conftest's ``--disable-gpu``).

Over the golden MindSpore landscapes and landscapes ``SummaryRecord`` wrote: the surface
and the contour plot the file's grid, the training path with its epochs labelled and the
convergence point; train/result and the interval switch (kept in the URL across a
reload); surface or contour alone (the surface's WebGL context freed); two runs side by
side with their surfaces turned together; messages that cannot be drawn are explained;
names written as markup show as text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from helpers.board import free_port, running_server
from helpers.board_data import wait_loaded
from helpers.landscape_page import (
    LANDSCAPE_RUNS,
    MARKUP,
    OURS_X,
    OURS_Y,
    LandscapePage,
    bowl,
    ours,
    write_landscape_base,
    write_landscapes,
)
from playwright.sync_api import Page

from sumlens.board.settings import BoardSettings
from sumlens.io import iter_events

DASH, TIMES = "\N{EN DASH}", "\N{MULTIPLICATION SIGN}"  # as the page writes ranges and grids


@pytest.fixture(scope="module")
def landscape_base(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Path:
    base = tmp_path_factory.mktemp("landscapes") / "base"
    write_landscape_base(base, golden_dir)
    return base


@pytest.fixture(scope="module")
def landscape_url(landscape_base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real server over ``write_landscape_base``'s runs, once every run is loaded."""
    settings = BoardSettings.create(
        landscape_base,
        port=free_port(),
        reload_interval=0.5,
        workspace=tmp_path_factory.mktemp("landscapes-workspace"),
    )
    with running_server(settings) as url:
        wait_loaded(url, LANDSCAPE_RUNS)
        yield url


@pytest.fixture
def view(page: Page, landscape_url: str, artifacts: Path) -> LandscapePage:
    return LandscapePage(page, landscape_url, artifacts)


def _fragment(*runs: str) -> str:
    return "/landscape?" + "&".join(f"run={quote(run, safe='')}" for run in runs)


def _golden_train(golden_dir: Path):  # type: ignore[no-untyped-def]
    for path in sorted((golden_dir / "landscape").iterdir()):
        for event in iter_events(path):
            if event.plugin == "landscape" and event.value.loss_path.intervals:
                return event.value
    raise AssertionError("the golden run has no train landscape")


def _floats(tensor) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.asarray(tensor.float_data, dtype=np.float64)


def test_the_golden_landscape_draws_its_grid_path_and_convergence(
    view: LandscapePage, golden_dir: Path
) -> None:
    message = _golden_train(golden_dir)
    grid = message.landscape
    z = _floats(grid.z).reshape(tuple(grid.z.dims))
    view.open(_fragment("./landscape"))
    view.wait_panel("./landscape")
    shown = view.panel("./landscape")
    assert (shown["tag"], shown["kind"], shown["interval"]) == (
        "landscape_[1, 3]",
        "train",
        "1-2-3",
    )
    assert shown["surface"] and shown["contour"] and shown["canvases"] >= 1  # WebGL drew
    assert f"4 {TIMES} 4 grid" in shown["caption"] and "epoch 1 → epoch 3" in shown["caption"]
    for chart, grid_type in (("surface", "surface"), ("contour", "contour")):
        traces = {t["kind"]: t for t in view.chart_traces("./landscape", chart)}
        assert set(traces) == {chart, "path", "convergence"}
        drawn = traces[chart]
        assert drawn["type"] == grid_type
        assert np.array(drawn["z"]).shape == z.shape == (4, 4)  # the file's grid size
        np.testing.assert_allclose(drawn["z"], z)
        np.testing.assert_allclose(drawn["x"], _floats(grid.x))
        np.testing.assert_allclose(drawn["y"], _floats(grid.y))
        path = traces["path"]
        np.testing.assert_allclose(path["x"], _floats(message.loss_path.points.x))
        np.testing.assert_allclose(path["y"], _floats(message.loss_path.points.y))
        if chart == "surface":
            np.testing.assert_allclose(path["z"], _floats(message.loss_path.points.z))
        assert path["text"] == ["epoch 1", "epoch 2", "epoch 3"]
        assert path["hover"][1].startswith("epoch 2 · step 4<br>loss 1.0394")
        point = message.convergence_point
        expected = [float(_floats(t)[0]) for t in (point.x, point.y)]
        assert [traces["convergence"]["x"][0], traces["convergence"]["y"][0]] == expected
    assert view.chart_layout("./landscape", "surface")["titles"] == [
        "PCA direction 1",
        "PCA direction 2",
        "loss",
    ]
    assert view.chart_layout("./landscape", "contour")["titles"] == [
        "PCA direction 1",
        "PCA direction 2",
    ]
    assert view.controls()["intervals"] == [["1-2-3", f"epochs 1{DASH}3"]]
    view.screenshot("landscape-golden")


def test_result_interval_and_drawing_choices_survive_a_reload(view: LandscapePage) -> None:
    view.open(_fragment("./ours"))
    draws = view.wait_panel("./ours")
    assert view.controls()["intervals"] == [
        ["1-2-3", f"epochs 1{DASH}3"],
        ["3-4-5", f"epochs 3{DASH}5"],
    ]
    view.pick_interval("3-4-5")
    draws = view.wait_panel("./ours", after=draws)
    assert view.panel("./ours")["tag"] == "landscape_[3, 5]"
    path = {t["kind"]: t for t in view.chart_traces("./ours", "contour")}["path"]
    assert path["text"] == ["epoch 3", "epoch 4", "epoch 5"]
    surface = {t["kind"]: t for t in view.chart_traces("./ours", "surface")}["surface"]
    np.testing.assert_allclose(surface["z"], bowl(OURS_X, OURS_Y, 0.3))  # 5 rows of 6
    assert view.options() == {"kind": "train", "interval": "3-4-5"}

    view.click_kind("Result")
    draws = view.wait_panel("./ours", after=draws)
    shown = view.panel("./ours")
    assert (shown["kind"], shown["tag"]) == ("result", "landscape_[5]")
    kinds = [t["kind"] for t in view.chart_traces("./ours", "contour")]
    assert kinds == ["contour", "convergence"]  # a result landscape has no path
    assert view.chart_layout("./ours", "contour")["titles"][0] == "Random direction 1"

    view.click_show("Contour")
    draws = view.wait_panel("./ours", after=draws)
    shown = view.panel("./ours")
    assert shown["contour"] and not shown["surface"] and shown["canvases"] == 0  # freed
    view.screenshot("landscape-result-contour")

    view.page.reload()
    view.wait_panel("./ours")
    shown = view.panel("./ours")
    assert (shown["kind"], shown["contour"], shown["surface"]) == ("result", True, False)
    assert view.controls()["kind"] == "Result" and view.controls()["show"] == "Contour"

    view.click_kind("Train")
    view.click_show("Surface")
    view.page.wait_for_function("() => location.hash.includes('surface')")
    view.wait_panel("./ours", after=view.draws_of("./ours") - 1)
    shown = view.panel("./ours")
    assert (shown["interval"], shown["surface"], shown["contour"]) == ("3-4-5", True, False)


def test_two_runs_side_by_side_turn_together(view: LandscapePage) -> None:
    view.open(_fragment("./landscape", "./ours", "./bad"))
    view.wait_panel("./landscape")
    view.wait_panel("./ours")
    assert "first 2 of 3 selected runs" in view.controls()["message"]
    assert view.page.evaluate(
        "() => [...document.querySelectorAll('.land-panel')].map((p) => p.dataset.run)"
    ) == ["./landscape", "./ours"]
    boxes = [view.page.locator(f".land-panel[data-run='{run}']").bounding_box()
             for run in ("./landscape", "./ours")]  # fmt: skip
    assert boxes[0] and boxes[1] and boxes[0]["x"] + boxes[0]["width"] <= boxes[1]["x"]
    assert abs(boxes[0]["y"] - boxes[1]["y"]) < 1  # side by side, not stacked
    for run in ("./landscape", "./ours"):
        shown = view.panel(run)
        assert shown["surface"] and shown["contour"] and shown["canvases"] >= 1
    view.turn("./landscape", (0.5, -2.0, 0.8))
    view.page.wait_for_function(
        """() => { const eye = document.querySelector(".land-panel[data-run='./ours'] "
            + ".land-surface").layout.scene.camera.eye;
            return Math.abs(eye.x - 0.5) < 1e-3 && Math.abs(eye.y + 2) < 1e-3; }"""
    )
    assert view.options() == {"eye": [0.5, -2.0, 0.8]}
    view.screenshot("landscape-side-by-side")
    view.page.reload()
    view.wait_panel("./ours")
    assert view.chart_layout("./ours", "surface")["eye"] == {"x": 0.5, "y": -2.0, "z": 0.8}


def test_landscapes_that_cannot_be_drawn_are_explained(view: LandscapePage) -> None:
    view.open(_fragment("./bad"))
    view.wait_panel("./bad", state="error")
    assert view.controls()["intervals"] == [
        ["1-2", f"epochs 1{DASH}2"],
        ["4-5", f"epochs 4{DASH}5"],
    ]
    note = view.panel("./bad")["note"]
    assert note.startswith("mismatch cannot be drawn: the grid's z has shape [3, 3]")
    view.pick_interval("4-5")
    view.page.wait_for_function(
        """() => document.querySelector(".land-panel[data-run='./bad'] .land-note")
            .textContent.startsWith('no_path')"""
    )
    assert "the loss path has 2 intervals but" in view.panel("./bad")["note"]
    result = view.page.locator("#landscape-view [data-land-kind='result']")
    assert result.is_disabled()  # no run shown holds a result landscape


def test_names_written_as_markup_show_as_text(view: LandscapePage) -> None:
    run = f"./{MARKUP}"
    view.open(_fragment(run))
    view.wait_panel(run)
    shown = view.panel(run)
    assert (shown["heading"], shown["what"], shown["images"]) == (run, MARKUP, 0)
    assert view.page.locator("#landscape-view img").count() == 0
    titles = view.chart_layout(run, "contour")["titles"]
    assert titles[0] == "&lt;img src=x onerror=alert(1)&gt; direction 1"  # plotly shows it as is
    sidebar = view.page.locator("#landscape-view .legend-name").all_text_contents()
    assert sidebar == [run]
    assert view.page.dialogs == []  # type: ignore[attr-defined]
    view.screenshot("landscape-markup")


def test_leaving_the_view_frees_the_charts_and_coming_back_redraws(view: LandscapePage) -> None:
    view.open(_fragment("./landscape"))
    draws = view.wait_panel("./landscape")
    view.page.click("nav a[data-view='runs']")
    view.page.wait_for_function(
        """() => { const panel = document.querySelector('.land-panel');
            return panel.querySelectorAll('canvas').length === 0
                && [...panel.querySelectorAll('.plot')].every((p) => !p.data); }"""
    )
    view.page.go_back()
    assert view.wait_panel("./landscape", after=draws) == draws + 1
    assert view.panel("./landscape")["canvases"] >= 1


def test_a_landscape_written_while_the_page_is_open_appears(
    view: LandscapePage, landscape_base: Path
) -> None:
    view.open(_fragment("./live"))  # not written yet
    view.page.wait_for_function(
        "() => document.querySelector('.land-message')?.textContent.includes('./live')"
    )
    first = ours([1, 2])
    write_landscapes(landscape_base / "live", [(first.default_tag(2), first)])
    draws = view.wait_panel("./live")
    assert view.controls()["intervals"] == [["1-2", f"epochs 1{DASH}2"]]
    second = ours([2, 3])
    write_landscapes(landscape_base / "live", [(second.default_tag(3), second)])
    view.page.wait_for_function(
        "() => document.querySelector('.land-interval').options.length === 2"
    )
    shown = view.panel("./live")
    assert (shown["interval"], view.draws_of("./live")) == ("1-2", draws)  # kept, not redrawn
    view.pick_interval("2-3")
    view.wait_panel("./live", after=draws)
    assert view.panel("./live")["tag"] == "landscape_[2, 3]"


def test_the_sidebar_lists_the_runs_beside_the_panels(view: LandscapePage) -> None:
    view.open(_fragment("./landscape", "./ours"))
    view.wait_panel("./landscape")
    inside = view.page.locator("#landscape-view .sidebar .land-panels").count()
    assert inside == 0  # the panels beside the sidebar, not squeezed into it
    panels = view.page.locator("#landscape-view .land-panels").bounding_box()
    sidebar = view.page.locator("#landscape-view .sidebar").bounding_box()
    assert panels is not None and sidebar is not None
    assert panels["x"] >= sidebar["x"] + sidebar["width"] - 1

    view.page.locator("#landscape-view").get_by_label("Remove ./landscape").click()
    view.page.wait_for_function("() => !location.hash.includes('.%2Flandscape')")
    assert view.page.evaluate("location.hash") == "#/landscape?run=.%2Fours"
    sidebar_runs = view.page.locator("#landscape-view .legend-name").all_text_contents()
    assert sidebar_runs == ["./ours"]
