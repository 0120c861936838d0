"""The Scalars view in Chromium along another tag (``epoch``) and with the min-max envelope.

A run SummaryRecord wrote: ``loss`` at every step, with a spike whose downsampling bucket
also holds a NaN (a min-max downsample keeps the NaN there, so the drawn line misses the
spike), and ``epoch`` at every step but each tenth. The plotted x are compared with the
epoch values read back from the file, step by step; the envelope must reach the spike.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from helpers.board_data import served_base
from helpers.board_page import BoardPage
from playwright.sync_api import Page, Response

from sumlens import SummaryRecord
from sumlens.io import read_scalars

STEPS = 3000
SPIKE_STEP, SPIKE = 2222, 50.0
GAPS = (SPIKE_STEP - 1, SPIKE_STEP + 1)  # NaN either side: the spike's bucket holds one
URL = "/scalars?run=./train&tags=^loss$&smoothing=0.95"


def _loss(step: int) -> float:
    if step == SPIKE_STEP:
        return SPIKE
    if step in GAPS:
        return float("nan")
    return float(1.0 / np.sqrt(step) + 0.02 * np.sin(step / 7.0))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("xaxis") / "base"
    with SummaryRecord(base / "train") as record:
        for step in range(1, STEPS + 1):
            record.add_value("scalar", "loss", _loss(step))
            if step % 10:
                record.add_value("scalar", "epoch", step / 300)
            record.add_value("scalar", "cycle", float(step % 500))
            record.record(step)
    return base


@pytest.fixture(scope="module")
def url(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_base(base, tmp_path_factory.mktemp("ws"), ["./train"]) as served:
        yield served


@pytest.fixture
def board(page: Page, url: str, artifacts: Path) -> BoardPage:
    return BoardPage(page, url, artifacts)


def _loss_answer(axis: str) -> object:
    def matches(response: Response) -> bool:
        if "/api/v1/scalars?" not in response.url:
            return False
        query = parse_qs(urlsplit(response.url).query)
        return query["tag"] == ["loss"] and query["axis"] == [axis]

    return matches


def _by_kind(board: BoardPage) -> dict[str, dict]:
    return {trace["kind"]: trace for trace in board.traces("loss")}


def test_an_epoch_axis_plots_each_point_at_its_epoch_and_survives_a_reload(
    board: BoardPage, base: Path
) -> None:
    steps, _, epochs = read_scalars(base / "train")["epoch"]
    epoch_at = dict(zip(steps.tolist(), epochs.tolist(), strict=True))
    board.open(URL)
    draws = board.wait_drawn("loss")
    with board.page.expect_response(_loss_answer("tag:epoch")) as answer:
        board.page.select_option(".x-tag-select", "epoch")
    draws = board.wait_drawn("loss", after=draws)
    body = answer.value.json()
    (series,) = body["series"]
    traces = _by_kind(board)
    plotted_steps = series["step"]
    assert 0 < len(plotted_steps) < STEPS  # downsampled
    assert all(step % 10 for step in plotted_steps)  # no epoch there: left out
    assert traces["smoothed"]["x"] == [epoch_at[step] for step in plotted_steps]
    assert traces["raw"]["x"] == traces["smoothed"]["x"]
    assert board.layout("loss")["xaxis"]["type"] == "linear"
    card = board.page.locator('.card[data-tag="loss"]')
    assert "300 left out: no epoch at their step" in card.locator(".card-note").inner_text()
    assert card.locator(".chart-flag").is_hidden()  # epoch grows with step
    assert board.page.locator('.segment[aria-pressed="true"]').count() == 0
    assert "xtag=epoch" in board.page.url
    board.screenshot("scalars-epoch-axis")

    # the download of the chart carries each point's epoch
    href = card.locator("a", has_text="CSV").get_attribute("href")
    assert href is not None and "axis=tag%3Aepoch" in href
    rows = board.page.request.get(href).text().splitlines()
    assert rows[0].endswith(",value,x") and len(rows) - 1 == STEPS

    board.page.reload()
    draws = board.wait_drawn("loss")
    assert board.page.locator(".x-tag-select").input_value() == "epoch"
    assert _by_kind(board)["smoothed"]["x"] == traces["smoothed"]["x"]

    # back to steps: the buttons clear the tag axis
    with board.page.expect_response(_loss_answer("step")):
        board.page.locator('.segment[data-axis="step"]').click()
    draws = board.wait_drawn("loss", after=draws)
    assert board.page.locator(".x-tag-select").input_value() == ""
    assert "xtag" not in board.page.url

    # an x tag that goes back: said on the chart, the points still in step order
    with board.page.expect_response(_loss_answer("tag:cycle")) as answer:
        board.page.select_option(".x-tag-select", "cycle")
    board.wait_drawn("loss", after=draws)
    flag = card.locator(".chart-flag")
    said = "cycle rises and falls with step (not monotonic): drawn in step order"
    assert flag.inner_text() == said
    (series,) = answer.value.json()["series"]
    assert series["step"] == sorted(series["step"])
    assert _by_kind(board)["smoothed"]["x"] == [float(step % 500) for step in series["step"]]


def test_the_envelope_shows_a_spike_the_downsampled_line_hides(board: BoardPage) -> None:
    board.open(URL)
    draws = board.wait_drawn("loss")
    traces = _by_kind(board)
    assert set(traces) == {"raw", "smoothed"}
    assert SPIKE not in traces["raw"]["y"]  # its bucket shows the NaN beside it
    assert max(y for y in traces["smoothed"]["y"] if y is not None) < SPIKE / 10

    with board.page.expect_response(_loss_answer("step")) as answer:
        board.page.locator(".envelope-toggle").click()
    board.wait_drawn("loss", after=draws)
    assert parse_qs(urlsplit(answer.value.url).query)["envelope"] == ["1"]
    traces = _by_kind(board)
    assert set(traces) == {"raw", "smoothed", "min", "max"}
    assert max(y for y in traces["max"]["y"] if y is not None) == SPIKE
    at = traces["max"]["y"].index(SPIKE)
    assert traces["max"]["x"][at] <= SPIKE_STEP <= traces["max"]["x"][at + 1]
    assert "env=1" in board.page.url
    assert board.page.locator(".envelope-toggle").get_attribute("aria-pressed") == "true"
    board.screenshot("scalars-envelope")
