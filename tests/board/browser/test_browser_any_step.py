"""An image step outside the kept sample, shown in Chromium (issue 30, "any image step").

A run of 60 image steps served with a sample of 10 images: the Images view's slider offers
every recorded step, marks the kept ones, and shows a step outside the sample with the
bytes written for it (read from the event file on request). A run of 40 histogram steps
served with a sample of 5: the Histograms view's "One step" slider offers every recorded
step, marks the kept ones, and draws a step outside the sample (every value of it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pytest
from helpers.board import free_port, running_server
from helpers.board_data import get_json, wait_loaded
from helpers.board_page import WAIT_MS
from helpers.plugin_data import stored_images
from helpers.plugin_page import PluginPage, watched_page
from playwright.sync_api import Browser

from sumlens import SummaryRecord
from sumlens.board.settings import BoardSettings

RUN = "./run"
TAG = "input/img"
STEPS = range(1, 61)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("anystep") / "base"
    with SummaryRecord(base / "run", file_format="mindspore") as record:
        for step in STEPS:  # one 3x12x16 image a step, wider as the steps go
            batch = np.random.default_rng(step).random((1, 3, 12, 16 + step % 7))
            record.add_value("image", TAG, batch.astype(np.float32))
            record.record(step)
    return base


@pytest.fixture(scope="module")
def url(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = BoardSettings.create(
        base,
        port=free_port(),
        reload_interval=0.5,
        workspace=tmp_path_factory.mktemp("anystep-workspace"),
        samples_per_plugin="images=10",
    )
    with running_server(settings) as found:
        wait_loaded(found, [RUN])
        yield found


@pytest.fixture
def view(browser: Browser, url: str, artifacts: Path) -> Iterator[PluginPage]:
    with watched_page(browser) as (page, _):
        yield PluginPage(page, url, artifacts)


def test_a_step_outside_the_sample_is_shown(view: PluginPage, url: str, base: Path) -> None:
    query = urlencode({"run": RUN, "plugin": "image", "tag": TAG})
    (series,) = get_json(f"{url}/api/v1/samples?{query}")["series"]
    kept, recorded, rank = series["step"], series["recorded"], series["rank"]
    assert recorded == list(STEPS) and len(kept) <= 11
    outside = next(step for step in recorded[len(recorded) // 3 :] if step not in kept)
    written = stored_images(base / "run", TAG, None)

    view.open("/images?" + urlencode({"run": RUN}))
    view.wait_panel("image", RUN, TAG, rank, step=recorded[-1])  # the newest by default
    panel = view.panel("image", RUN, TAG, rank)
    assert panel["count"] == len(recorded)  # every recorded step, not only the kept ones
    ticks = view.page.evaluate(
        "() => [...document.querySelectorAll('.image-panel datalist option')].map((o) => o.value)"
    )
    assert ticks == [str(recorded.index(step)) for step in kept]  # the kept ones marked

    view.slide_to("image", RUN, TAG, rank, recorded.index(outside))
    view.wait_panel("image", RUN, TAG, rank, step=outside)
    panel = view.panel("image", RUN, TAG, rank)
    assert panel["step"] == f"Step {outside}"
    assert f"step={outside}" in panel["src"]
    shown = view.page.locator(".image-panel .step-picker")
    assert shown.get_attribute("data-kept") == "false"
    assert shown.locator(".step-kept").text_content() == "read from its file"
    assert view.image_bytes(RUN, TAG, rank) == written[outside]
    size = view.page.evaluate(
        "() => { const img = document.querySelector('.image-panel img');"
        " return [img.naturalWidth, img.naturalHeight]; }"
    )
    assert size == [16 + outside % 7, 12]
    view.screenshot("any-step-image")

    view.slide_to("image", RUN, TAG, rank, recorded.index(kept[0]))  # a kept one says so
    view.wait_panel("image", RUN, TAG, rank, step=kept[0])
    assert shown.get_attribute("data-kept") == "true"
    assert view.image_bytes(RUN, TAG, rank) == written[kept[0]]


HIST_TAG = "layer/weights"
HIST_STEPS = range(1, 41)


def _weights(step: int) -> np.ndarray:
    """The values whose histogram is written at ``step`` (wider as the steps go)."""
    return np.random.default_rng(step).normal(0.0, 1.0 + step / 10, 500).astype(np.float32)


@pytest.fixture(scope="module")
def hist_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("anystep-hist") / "base"
    with SummaryRecord(base / "run", file_format="mindspore") as record:
        for step in HIST_STEPS:
            record.add_value("histogram", HIST_TAG, _weights(step))
            record.record(step)
    settings = BoardSettings.create(
        base,
        port=free_port(),
        reload_interval=0.5,
        workspace=tmp_path_factory.mktemp("anystep-hist-workspace"),
        samples_per_plugin="histograms=5",
    )
    with running_server(settings) as found:
        wait_loaded(found, [RUN])
        yield found


def test_a_histogram_step_outside_the_sample_is_shown(
    browser: Browser, hist_url: str, artifacts: Path
) -> None:
    query = urlencode({"run": RUN, "tag": HIST_TAG})
    (series,) = get_json(f"{hist_url}/api/v1/histograms?{query}")["series"]
    kept = [h["step"] for h in series["histograms"]]
    assert series["recorded"] == list(HIST_STEPS) and len(kept) <= 6
    outside = next(step for step in HIST_STEPS[len(HIST_STEPS) // 3 :] if step not in kept)
    wanted = get_json(f"{hist_url}/api/v1/histograms/at?{query}&step={outside}")
    assert wanted["count"] == 500 and wanted["step"] == outside

    with watched_page(browser) as (page, _):
        view = PluginPage(page, hist_url, artifacts)
        view.open("/histograms?" + urlencode({"run": RUN}))
        card = page.locator(f'.histogram-card[data-tag="{HIST_TAG}"]')
        card.and_(page.locator('[data-state="ready"]')).wait_for()
        card.locator(".histogram-at-step > summary").click()
        at_step = card.locator(".histogram-at-step")
        picker = at_step.locator(".step-picker")
        assert picker.get_attribute("data-step") == str(HIST_STEPS[-1])  # the newest by default
        assert at_step.locator(".step-slider").get_attribute("max") == str(len(HIST_STEPS) - 1)
        ticks = at_step.locator("datalist option").evaluate_all("(os) => os.map((o) => o.value)")
        assert ticks == [str(HIST_STEPS.index(step)) for step in kept]  # the kept ones marked

        view.set_range(at_step.locator(".step-slider"), HIST_STEPS.index(outside))
        drawn = """([step]) => { const box = document.querySelector('.histogram-at-step');
            const plot = box.querySelector('.histogram-step-plot');
            return box.dataset.state === 'ready' && plot.data?.length === 1
                && plot.data[0].meta.step === step; }"""
        page.wait_for_function(drawn, arg=[outside], timeout=WAIT_MS)
        assert picker.get_attribute("data-kept") == "false"
        assert picker.locator(".step-kept").text_content() == "read from its file"
        shown = page.evaluate(
            "() => document.querySelector('.histogram-step-plot').data[0].y.reduce((a, b) => a + b)"
        )
        assert shown == pytest.approx(wanted["count"])  # every value of that step, re-binned
        view.screenshot("any-step-histogram")
