"""An image step outside the kept sample, shown in Chromium (issue 30, "any image step").

A run of 60 image steps served with a sample of 10 images: the Images view's slider offers
every recorded step, marks the kept ones, and shows a step outside the sample with the
bytes written for it (read from the event file on request).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pytest
from helpers.board import free_port, running_server
from helpers.board_data import get_json, wait_loaded
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
