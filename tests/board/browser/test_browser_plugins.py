"""The training dashboard and the Images, Histograms and Tensors views in Chromium.

Over the golden MindSpore runs and runs ``SummaryRecord`` wrote in both formats (images,
histograms, tensors; two ranks in the MindSpore one), served under a URL prefix: the
dashboard shows a card per plugin; an image slider shows the bytes stored for each step;
histogram charts draw every kept step; a tensor slice shows the values written.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import numpy as np
import pytest
from helpers.board import free_port, running_server, wait_until
from helpers.board_data import get_json, wait_loaded
from helpers.plugin_data import (
    IMAGE_TAG,
    PLUGIN_RUNS,
    TENSOR_TAG,
    VECTOR_TAG,
    activation,
    bias,
    stored_images,
    weights,
    write_plugin_base,
    write_step,
)
from helpers.plugin_page import PluginPage, WatchedPage, watched_page
from playwright.sync_api import Browser

from sumlens import SummaryRecord
from sumlens.board.settings import BoardSettings

PREFIX = "/sumlens/plugins"
LIVE = "./live"
CARD_ORDER = ["scalar", "histogram", "tensor", "image", "graph", "dataset_graph", "lineage",
              "landscape"]  # fmt: skip
LINEAGE = {"train_lineage", "eval_lineage", "custom_lineage_data"}
VIEW_OF = {"scalar": "scalars", "histogram": "histograms", "tensor": "tensors", "image": "images",
           "graph": "graph", "dataset_graph": "lineage", "lineage": "lineage",
           "landscape": "landscape"}  # fmt: skip
PREVIEWED = {"scalar", "histogram", "tensor", "image"}
MODES = ("offset", "overlay", "distribution")


@pytest.fixture(scope="module")
def plugin_base(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Path:
    base = tmp_path_factory.mktemp("plugins") / "base"
    write_plugin_base(base, golden_dir)
    return base


@pytest.fixture(scope="module")
def plugin_url(plugin_base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real server over ``plugin_base`` under ``PREFIX``, once every run is loaded."""
    settings = BoardSettings.create(
        plugin_base,
        port=free_port(),
        reload_interval=0.5,
        workspace=tmp_path_factory.mktemp("plugins-workspace"),
        url_path_prefix=PREFIX,
    )
    with running_server(settings) as url:
        wait_loaded(url, PLUGIN_RUNS)
        yield url


@pytest.fixture
def watched(
    browser: Browser, plugin_url: str, artifacts: Path
) -> Iterator[tuple[PluginPage, WatchedPage]]:
    with watched_page(browser) as (page, seen):
        yield PluginPage(page, plugin_url, artifacts), seen
    assert all(url.startswith(f"{plugin_url}/") for url in seen.requests), seen.requests


@pytest.fixture
def view(watched: tuple[PluginPage, WatchedPage]) -> PluginPage:
    return watched[0]


def expected_cards(tags: dict[str, list[str]]) -> list[str]:
    """The dashboard cards of a run with these /runs ``tags``, in the dashboard's order."""
    kinds = {"lineage" if plugin in LINEAGE else plugin for plugin, names in tags.items() if names}
    return [kind for kind in CARD_ORDER if kind in kinds]


def samples(
    url: str, run: str, plugin: str, tag: str, field: str = "step"
) -> dict[int | None, list[int]]:
    """The kept steps of ``tag`` (or every recorded one: ``field="recorded"``), per rank,
    as the API lists them."""
    body = get_json(
        f"{url}/api/v1/samples?" + urlencode({"run": run, "plugin": plugin, "tag": tag})
    )
    return {series["rank"]: series[field] for series in body["series"]}


def api_error(url: str) -> str:
    """The one-line ``detail`` of the error the API answers at ``url``."""
    try:
        urllib.request.urlopen(url, timeout=30)
    except urllib.error.HTTPError as err:
        return json.loads(err.read())["detail"]
    raise AssertionError(f"{url} did not fail")


def cells(values: np.ndarray, digits: int = 4) -> list[list[str]]:
    """A 1-D or 2-D slice as the table shows it (a 1-D slice is one row)."""
    rows = np.atleast_2d(values)
    return [[f"{float(v):.{digits}f}" for v in row] for row in rows]


def test_dashboard_shows_a_card_per_plugin(
    view: PluginPage, plugin_url: str, plugin_base: Path
) -> None:
    runs = {run["id"]: run for run in get_json(f"{plugin_url}/api/v1/runs")["runs"]}
    view.open("/runs")
    view.wait_runs_listed(PLUGIN_RUNS)
    view.page.get_by_label("Training dashboard of ./collector").click()
    view.wait_dashboard("./collector")
    assert view.page.evaluate("location.hash") == "#/run?run=.%2Fcollector"

    for run_id in sorted(PLUGIN_RUNS, key=lambda run: run != "./collector"):  # it is open
        if run_id != "./collector":
            view.open(f"/run?run={quote(run_id, safe='')}")
            view.wait_dashboard(run_id)
        cards = view.dashboard_cards()
        assert [card["plugin"] for card in cards] == expected_cards(runs[run_id]["tags"]), run_id
        assert {card["state"] for card in cards} == {"ready"}, cards
        for card in cards:
            view_name = VIEW_OF[card["plugin"]]  # each card links to its view of this run
            assert card["link"] == f"#/{view_name}?run={quote(run_id, safe='')}"
            if card["plugin"] in PREVIEWED:
                assert card["panels"] >= 1
            else:  # what the run holds of it, as text
                assert "recorded" in card["text"] and "no view" not in card["text"]
            if card["plugin"] in ("scalar", "histogram"):
                assert card["plots"] == card["panels"]
            if card["plugin"] == "histogram":  # a ridge per kept step, at most 30 per panel
                kept = samples(plugin_url, run_id, "histogram", card["caption"])
                assert card["curves"] == [min(len(kept[r]), 30) for r in sorted(kept)], card
            if card["plugin"] == "image":
                assert card["images"] == card["panels"]
        view.screenshot(f"dashboard-{run_id.strip('./').replace('/', '-')}")

    view.open("/run?run=.%2Fplug%2Fms")
    view.wait_dashboard("./plug/ms")
    distributed = {card["plugin"]: card for card in view.dashboard_cards()}
    for plugin in ("scalar", "histogram", "tensor", "image"):  # the ranks side by side
        assert distributed[plugin]["ranks"] == ["rank 0", "rank 1"], plugin
    landscape = runs["./landscape"]["tags"]["landscape"][0]
    view.open("/run?run=.%2Flandscape")
    view.wait_dashboard("./landscape")
    assert landscape in {c["plugin"]: c for c in view.dashboard_cards()}["landscape"]["text"]

    view.page.locator("#run-view .dash-card[data-plugin=histogram] .open-view").click()
    view.page.wait_for_function(
        "() => !document.getElementById('histograms-view').hidden"
        " && document.querySelector('.histogram-card')?.dataset.state === 'ready'"
    )
    assert view.page.evaluate("location.hash") == "#/histograms?run=.%2Flandscape"


def test_dashboard_follows_a_live_run(view: PluginPage, plugin_url: str, plugin_base: Path) -> None:
    with SummaryRecord(plugin_base / "live") as record:
        for step in (1, 2, 3):
            write_step(record, step)
        record.flush()
        kept = lambda: list(samples(plugin_url, LIVE, "image", IMAGE_TAG).values())  # noqa: E731
        wait_until(lambda: kept() == [[1, 2, 3]], timeout=60)
        view.open("/run?run=.%2Flive")
        view.wait_dashboard(LIVE)
        caption = "#run-view .dash-card[data-plugin=image] .dash-panel .dash-caption"
        assert view.page.locator(caption).text_content().startswith("step 3 ")

        for step in (4, 5):
            write_step(record, step)
        record.flush()
        view.page.wait_for_function(
            "(sel) => document.querySelector(sel)?.textContent.startsWith('step 5 ')", arg=caption
        )
        view.wait_dashboard(LIVE)
        table = view.page.evaluate(
            """() => [...document.querySelectorAll(
                '#run-view .dash-card[data-plugin=tensor] .tensor-table tbody tr')]
                .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))"""
        )
        assert table == cells(activation(5, None)[0], digits=2)


def test_image_slider_shows_the_stored_png(
    view: PluginPage, plugin_url: str, plugin_base: Path
) -> None:
    shown = [  # run, its directory, tag, rank
        ("./plug/tb", "plug/tb", IMAGE_TAG, None),
        ("./plug/ms", "plug/ms", IMAGE_TAG, 1),
        ("./collector", "collector", "input_data/auto", 0),
    ]
    query = [("run", run) for run, *_ in shown] + [("tags", "^(input/img|input_data/auto)$")]
    view.open("/images?" + urlencode(query))
    for run, directory, tag, rank in shown:
        kept = samples(plugin_url, run, "image", tag)[rank]
        offered = samples(plugin_url, run, "image", tag, "recorded")[rank]  # any step
        stored = stored_images(plugin_base / directory, tag, rank)
        assert len(kept) >= 3 and set(kept) <= set(stored)
        view.wait_panel("image", run, tag, rank, step=kept[-1])  # the newest by default
        panel = view.panel("image", run, tag, rank)
        assert (panel["index"], panel["count"]) == (len(offered) - 1, len(offered))
        for index in (0, len(kept) // 2):
            view.slide_to("image", run, tag, rank, offered.index(kept[index]))
            view.wait_panel("image", run, tag, rank, step=kept[index])
            panel = view.panel("image", run, tag, rank)
            assert panel["step"] == f"Step {kept[index]}"
            assert f"step={kept[index]}" in panel["src"]
            assert view.image_bytes(run, tag, rank) == stored[kept[index]]
    assert view.page.locator(".image-panel").count() == 4  # ./plug/ms has two ranks

    view.set_range(view.page.get_by_label("Brightness"), 150)
    view.page.wait_for_function("() => location.hash.includes('bright=150')")
    assert "brightness(1.5)" in view.page.evaluate(
        "() => getComputedStyle(document.querySelector('.image-panel img')).filter"
    )
    view.screenshot("images")

    before = view.page.evaluate("location.hash")
    assert "at=" in before
    view.page.reload()
    run, _, tag, rank = shown[1]
    kept = samples(plugin_url, run, "image", tag)[rank]
    view.wait_panel("image", run, tag, rank, step=kept[len(kept) // 2])  # the step picked
    assert view.page.evaluate("location.hash") == before
    view.page.locator(".reset-filter[data-filter=bright]").click()
    view.page.wait_for_function("() => !location.hash.includes('bright=')")

    size = """(img) => [img.getBoundingClientRect().width, img.naturalWidth]"""
    image = view.page.locator(".image-card[data-run='./plug/tb'] .image-frame img")
    fitted, natural = image.evaluate(size)
    assert fitted > natural  # small images are scaled up to fit
    image.click()
    view.page.wait_for_function(
        "() => document.querySelector(\".image-card[data-run='./plug/tb'] .image-frame\")"
        ".dataset.zoom === 'native'"
    )
    assert image.evaluate(size) == [natural, natural]  # 1:1


def reference_median(histogram: dict[str, Any]) -> float:
    """The median of a histogram's buckets, values spread evenly in each (clipped to
    [min, max]): what the distribution view should plot."""
    counts = np.asarray(histogram["counts"])
    left = np.clip(np.asarray(histogram["left"]), histogram["min"], histogram["max"])
    right = np.clip(
        np.asarray(histogram["left"]) + np.asarray(histogram["width"]),
        histogram["min"],
        histogram["max"],
    )
    target = counts.sum() / 2
    below = np.concatenate(([0.0], np.cumsum(counts)))
    i = int(np.flatnonzero((below[1:] >= target) & (counts > 0))[0])
    return float(left[i] + (right[i] - left[i]) * (target - below[i]) / counts[i])


def median_of(traces: list[dict[str, Any]], run: str, rank: int | None) -> dict[str, Any]:
    """The median line of (run, rank) among a distribution chart's traces."""
    (median,) = (t for t in traces if (t["run"], t["rank"], t["kind"]) == (run, rank, "median"))
    return median


def test_histograms_draw_every_kept_step(view: PluginPage, plugin_url: str) -> None:
    runs = ["./plug/ms", "./plug/tb", "./collector"]
    tags = ["w", "fc1.weight/auto"]
    answers = {
        tag: {
            (series["run"], series["rank"]): series["histograms"]
            for run in runs
            for series in get_json(
                f"{plugin_url}/api/v1/histograms?" + urlencode({"run": run, "tag": tag})
            )["series"]
        }
        for tag in tags
    }
    assert set(answers["w"]) == {("./plug/ms", 0), ("./plug/ms", 1), ("./plug/tb", None)}
    view.open("/histograms?" + urlencode([("run", run) for run in runs] + [("tags", "^(w|fc1.w)")]))
    draws = {tag: 0 for tag in tags}
    for mode in MODES:
        view.page.locator(f".histograms-view button[data-mode={mode}]").click()
        for tag in tags:
            draws[tag] = view.wait_histogram(tag, mode, after=draws[tag])
            traces = view.histogram_traces(tag)
            for (run, rank), histograms in answers[tag].items():
                steps = [h["step"] for h in histograms]
                mine = [t for t in traces if (t["run"], t["rank"]) == (run, rank)]
                if mode == "distribution":
                    median = median_of(mine, run, rank)
                    assert median["x"] == steps
                    expected = [reference_median(h) for h in histograms]
                    np.testing.assert_allclose(median["y"], expected, rtol=1e-6, atol=1e-9)
                else:
                    kind = "ridge" if mode == "offset" else "line"
                    assert sorted(t["step"] for t in mine if t["kind"] == kind) == steps
        view.screenshot(f"histograms-{mode}")

    # the percentiles are those of the values written, to within a bucket
    median = median_of(view.histogram_traces("w"), "./plug/ms", 1)
    for step, value in zip(median["x"], median["y"], strict=True):
        data = weights("w", step, 1)
        width = (data.max() - data.min()) / 10
        assert abs(value - float(np.median(data))) < width
    view.page.locator(".histograms-view button[data-hist-axis=relative]").click()
    view.wait_histogram("w", "distribution", after=draws["w"])
    median = median_of(view.histogram_traces("w"), "./plug/tb", None)
    assert median["x"][0] == 0 and median["x"] == sorted(median["x"])
    assert "hmode=distribution" in view.page.evaluate("location.hash")


def test_tensor_slice_shows_the_written_values(
    watched: tuple[PluginPage, WatchedPage], plugin_url: str
) -> None:
    view, seen = watched
    run, rank = "./plug/ms", 1
    kept = samples(plugin_url, run, "tensor", TENSOR_TAG)[rank]
    view.open("/tensors?" + urlencode([("run", run), ("run", "./plug/tb")]))
    view.wait_panel("tensor", run, TENSOR_TAG, rank, step=kept[-1], slice_="[0,:,:]")
    panel = view.panel("tensor", run, TENSOR_TAG, rank)
    assert panel["slice"] == "[0,:,:]"  # MindInsight's default: leading 0, the last two whole
    assert panel["shape"] == "shape [2,3,4] · float32"
    assert panel["rows"] == cells(activation(kept[-1], rank)[0])
    assert panel["bins"] == "30" and panel["binned"] == 12
    view.wait_panel("tensor", "./plug/tb", VECTOR_TAG, None, slice_="[:]")
    vector = view.panel("tensor", "./plug/tb", VECTOR_TAG, None)
    assert vector["rows"] == cells(bias(kept[-1], None))  # 1-D: one row

    view.type_slice(run, TENSOR_TAG, rank, "[1,:,2]")
    view.wait_panel("tensor", run, TENSOR_TAG, rank, slice_="[1,:,2]")
    panel = view.panel("tensor", run, TENSOR_TAG, rank)
    values = activation(kept[-1], rank)[1, :, 2]
    assert panel["rows"] == cells(values)
    assert float(panel["stats"]["min"]) == values.min()
    assert float(panel["stats"]["max"]) == values.max()

    view.slide_to("tensor", run, TENSOR_TAG, rank, 0)
    view.wait_panel("tensor", run, TENSOR_TAG, rank, step=kept[0], slice_="[1,:,2]")
    assert view.panel("tensor", run, TENSOR_TAG, rank)["rows"] == cells(
        activation(kept[0], rank)[1, :, 2]
    )
    view.screenshot("tensors")

    before = view.page.evaluate("location.hash")
    view.page.reload()
    view.wait_panel("tensor", run, TENSOR_TAG, rank, step=kept[0], slice_="[1,:,2]")
    assert view.page.evaluate("location.hash") == before

    seen.allow_console_error(r"status of 422")  # the server refuses the next slice
    view.type_slice(run, TENSOR_TAG, rank, "[5,:,:]")
    view.wait_panel("tensor", run, TENSOR_TAG, rank, state="error")
    detail = api_error(
        f"{plugin_url}/api/v1/tensor?"
        + urlencode({"run": run, "tag": TENSOR_TAG, "rank": rank, "slice": "[5,:,:]"})
    )
    panel = view.panel("tensor", run, TENSOR_TAG, rank)
    assert panel["error"] == detail and "out of range" in detail
    view.screenshot("tensors-bad-slice")
