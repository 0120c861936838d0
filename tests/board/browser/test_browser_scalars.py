"""The Scalars view in Chromium: what it plots, zoom, smoothing, URL state and escaping."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import numpy as np
from helpers.board import tb_ema
from helpers.board_data import DEEP_TAGS, LONG_STEPS, XSS
from helpers.board_page import BoardPage
from playwright.sync_api import Response

from sumlens.io import read_scalars


def _scalars_of(tag: str, ranged: bool | None = None) -> Callable[[Response], bool]:
    """A predicate: the response is the page's /scalars answer for ``tag``.

    ``ranged``: True, only answers for a range (``start``/``end``); False, only unranged ones.
    """

    def matches(response: Response) -> bool:
        if "/api/v1/scalars?" not in response.url:
            return False
        query = _query(response)
        return query["tag"] == [tag] and (ranged is None or ("start" in query) == ranged)

    return matches


def _query(response: Response) -> dict[str, list[str]]:
    return parse_qs(urlsplit(response.url).query)


def assert_plotted(traces: list[dict[str, Any]], body: dict[str, Any]) -> None:
    """The chart plots exactly the series of ``body``: raw values and smoothed ones."""
    plotted = {(t["run"], t["rank"], t["kind"]): t for t in traces}
    assert len(plotted) == len(traces) == 2 * len(body["series"])
    for series in body["series"]:
        raw = plotted[series["run"], series["rank"], "raw"]
        smoothed = plotted[series["run"], series["rank"], "smoothed"]
        assert raw["x"] == series["step"]
        assert raw["y"] == series["value"]
        assert smoothed["x"] == series["step"]
        assert smoothed["y"] == series["smoothed"]


def test_plotted_points_are_the_api_answer_and_a_zoom_fetches_its_range(
    board: BoardPage,
) -> None:
    runs = ["./ours/ms", "./ours/tb", "./dist"]
    with board.page.expect_response(_scalars_of("loss")) as first:
        board.open("/scalars?" + urlencode([("run", run) for run in runs] + [("tags", "^loss$")]))
    draws = board.wait_drawn("loss")
    traces = board.traces("loss")
    assert_plotted(traces, first.value.json())
    assert {t["name"] for t in traces if t["kind"] == "smoothed"} == {
        "./ours/ms",
        "./ours/tb",
        "./dist (rank 0)",
        "./dist (rank 1)",
    }
    board.screenshot("scalars")
    csv = board.page.locator(".download a", has_text="CSV").get_attribute("href")
    assert csv is not None
    rows = board.page.request.get(csv).text().splitlines()
    assert rows[0] == "run,rank,tag,step,wall_time,value"
    assert len(rows) - 1 == sum(series["total"] for series in first.value.json()["series"])

    with board.page.expect_response(_scalars_of("loss", ranged=True)) as ranged:
        board.relayout("loss", {"xaxis.range": [40, 90]})
    query = _query(ranged.value)
    assert (query["start"], query["end"], query["axis"]) == (["40"], ["90"], ["step"])
    draws = board.wait_drawn("loss", after=draws)
    body = ranged.value.json()
    assert_plotted(board.traces("loss"), body)
    steps = [step for series in body["series"] for step in series["step"]]
    assert steps and min(steps) == 40 and max(steps) == 90
    assert board.layout("loss")["xaxis"]["range"] == [40, 90]
    assert "zoom=" in board.page.evaluate("location.hash")

    with board.page.expect_response(_scalars_of("loss", ranged=False)) as full:
        board.page.locator(".card[data-tag=loss] .icon-button").click()
    board.wait_drawn("loss", after=draws)
    assert_plotted(board.traces("loss"), full.value.json())
    assert board.layout("loss")["xaxis"]["autorange"] is True
    assert "zoom=" not in board.page.evaluate("location.hash")


def test_smoothed_curve_is_the_ema_of_every_point_whatever_the_zoom(
    board: BoardPage, board_base: Path
) -> None:
    weight = 0.9
    steps, _, values = read_scalars(board_base / "long")["loss"]
    assert steps.size == LONG_STEPS
    ema = dict(zip(steps.tolist(), tb_ema(values, weight).tolist(), strict=True))

    board.open(f"/scalars?run=./long&tags=^loss$&smoothing={weight}")
    draws = board.wait_drawn("loss")
    (smoothed,) = (t for t in board.traces("loss") if t["kind"] == "smoothed")
    assert 2 < len(smoothed["x"]) < LONG_STEPS / 10  # downsampled
    assert smoothed["x"][0] == 1 and smoothed["x"][-1] == LONG_STEPS
    np.testing.assert_allclose(smoothed["y"], [ema[s] for s in smoothed["x"]], rtol=1e-9)
    board.screenshot("scalars-smoothing")

    board.relayout("loss", {"xaxis.range": [50_000, 50_400]})
    board.wait_drawn("loss", after=draws)
    (smoothed,) = (t for t in board.traces("loss") if t["kind"] == "smoothed")
    assert smoothed["x"] == list(range(50_000, 50_401))  # every point of the range
    np.testing.assert_allclose(smoothed["y"], [ema[s] for s in smoothed["x"]], rtol=1e-9)


def test_charts_exist_only_while_on_screen(board: BoardPage) -> None:
    first, last = DEEP_TAGS[0], DEEP_TAGS[-1]
    board.open("/scalars?run=./deep")
    board.wait_drawn(first)
    charted = board.charted_tags()
    assert first in charted and last not in charted

    board.scroll_cards(1e9)
    board.wait_drawn(last)
    board.page.wait_for_function(
        "(tag) => !document.querySelector(`.card[data-tag='${tag}'] .plot .main-svg`)", arg=first
    )
    charted = board.charted_tags()
    assert last in charted and len(charted) < len(DEEP_TAGS)


def test_the_url_keeps_the_view_across_a_reload(board: BoardPage) -> None:
    board.open()
    board.wait_runs_listed(["./ours/ms", "./dist"])
    board.page.get_by_label("Select ./ours/ms").check()
    board.page.get_by_label("Select ./dist").check()
    board.page.locator(".compare").click()
    board.page.locator(".scalars-view .search-input").fill("^(loss|lr)$")
    board.page.locator(".smoothing-value").fill("0.8")
    board.page.locator(".smoothing-value").press("Enter")
    board.page.locator("button[data-axis=relative]").click()
    board.page.locator(".log-toggle").click()
    draws = board.wait_drawn("loss")
    x0, x1 = board.layout("loss")["xaxis"]["range"]
    zoom = [x0 + (x1 - x0) / 4, x0 + (x1 - x0) / 2]
    board.relayout("loss", {"xaxis.range": zoom})
    board.wait_drawn("loss", after=draws)
    before = board.page.evaluate("location.hash")
    for part in ("run=.%2Fours%2Fms&run=.%2Fdist", "smoothing=0.8", "axis=relative", "log=1"):
        assert part in before

    with board.page.expect_response(_scalars_of("loss")) as reloaded:
        board.page.reload()
    board.wait_drawn("loss")
    board.wait_drawn("lr")
    assert board.page.evaluate("location.hash") == before
    query = _query(reloaded.value)
    assert query["run"] == ["./ours/ms", "./dist"]
    assert (query["smoothing"], query["axis"]) == (["0.8"], ["relative"])
    assert [float(query["start"][0]), float(query["end"][0])] == zoom
    layout = board.layout("loss")
    assert layout["yaxis"]["type"] == "log"
    assert layout["xaxis"]["range"] == zoom
    page = board.page
    assert page.locator(".scalars-view .search-input").input_value() == "^(loss|lr)$"
    assert page.locator(".smoothing-value").input_value() == "0.8"
    assert page.locator("button[data-axis=relative]").get_attribute("aria-pressed") == "true"
    assert page.locator(".log-toggle").get_attribute("aria-pressed") == "true"
    assert page.evaluate(
        "() => [...document.querySelectorAll('.card')].map((card) => card.dataset.tag)"
    ) == ["loss", "lr"]
    board.screenshot("scalars-url-state")


def test_names_with_markup_show_as_text(board: BoardPage) -> None:
    board.open()
    board.wait_runs_listed([f"./{XSS}"])  # the link's textContent is the literal name
    board.screenshot("runs-markup-names")

    board.open("/scalars?" + urlencode([("run", f"./{XSS}"), ("run", "./ours/ms")]))
    board.wait_drawn(XSS)
    board.wait_drawn("loss")
    card_titles = board.page.evaluate(
        "() => [...document.querySelectorAll('.card .tag')].map((h) => h.textContent)"
    )
    assert XSS in card_titles
    legend = board.page.evaluate(
        "(tag) => [...[...document.querySelectorAll('.card')].find((c) => c.dataset.tag === tag)"
        ".querySelectorAll('.legendtext')].map((t) => t.textContent)",
        "loss",
    )
    assert f"./{XSS}" in legend
    plot = board.page.locator(".card[data-tag=loss] .nsewdrag")
    box = plot.bounding_box()
    assert box is not None
    # near the left edge: steps where both runs have points (the markup-named run has 20)
    board.page.mouse.move(box["x"] + box["width"] * 0.03, box["y"] + box["height"] / 2)
    board.page.wait_for_function(
        "(name) => document.querySelector('.card[data-tag=loss] .hoverlayer')"
        ".textContent.includes(name)",
        arg=f"./{XSS}",
    )
    assert board.page.evaluate("() => document.querySelectorAll('img').length") == 0
    assert board.page.dialogs == []  # type: ignore[attr-defined]
    board.screenshot("scalars-markup-names")
