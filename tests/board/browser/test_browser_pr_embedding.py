"""The PR Curves and Embeddings views in Chromium, over runs torch's ``SummaryWriter`` wrote.

Two runs with ``add_pr_curve`` at two steps (overlaid in one card per tag, a step slider per
run) and one with ``add_embedding`` (300 points; label, class and score columns): the PR
curve is drawn with a point per threshold and the threshold and counts in its hover (and a
bookmark of the view's old id, ``#/prcurves``, still opens it); the embedding is a 2-D
canvas scatter of every point drawn without plotly.js, a hovered point's label shown as
text, a colour bar for the score, a search that rings the labels holding the text typed,
and 3-D draws the same points in plotly's scene. Screenshots go to the artifacts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pytest
from helpers.board import free_port, running_server, wait_until
from helpers.board_data import get_json
from helpers.board_page import WAIT_MS, BoardPage
from helpers.plugin_page import watched_page
from playwright.sync_api import Browser

from sumlens.board.settings import BoardSettings

THRESHOLDS = 21
POINTS = 300
MARKUP = "<b>x</b>"  # a label that must show as these characters, not as bold text
LABELS = [MARKUP] + [f"word{i}" for i in range(1, POINTS)]
PICTURES = 30
SOLID = [(230, 20, 20), (20, 200, 40), (30, 60, 230), (240, 200, 0)]
"""The colours of the thumbnails: picture i is all SOLID[i % 4]."""


def _write(base: Path) -> None:
    import torch
    from torch.utils.tensorboard import SummaryWriter

    rng = np.random.default_rng(0)
    for run in ("a", "b"):
        with SummaryWriter(str(base / run)) as writer:
            for step in (0, 1):
                labels = rng.integers(0, 2, 80)
                scores = np.clip(labels * 0.4 + rng.uniform(size=80) * 0.6, 0, 1)
                writer.add_pr_curve("cat", labels, scores, step, num_thresholds=THRESHOLDS)
            if run == "b":
                vectors = torch.from_numpy(rng.normal(size=(PICTURES, 6)).astype(np.float32))
                colours = np.array([SOLID[i % 4] for i in range(PICTURES)], np.float32) / 255
                images = torch.from_numpy(np.tile(colours[:, :, None, None], (1, 1, 10, 10)))
                writer.add_embedding(vectors, metadata=[f"p{i}" for i in range(PICTURES)],
                                     label_img=images, tag="pictures", global_step=1)  # fmt: skip
            if run == "a":
                vectors = torch.from_numpy(rng.normal(size=(POINTS, 8)).astype(np.float32))
                rows = [[w, f"c{i % 3}", str(i / (POINTS - 1))] for i, w in enumerate(LABELS)]
                writer.add_embedding(vectors, metadata=rows, tag="words", global_step=2,
                                     metadata_header=["label", "class", "score"])  # fmt: skip


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("pr-embedding")
    _write(base)
    settings = BoardSettings.create(
        base, port=free_port(), reload_interval=0.5,
        workspace=tmp_path_factory.mktemp("pr-embedding-ws"),
    )  # fmt: skip
    with running_server(settings) as served:

        def listed() -> bool:
            runs = {r["id"]: r["tags"] for r in get_json(f"{served}/api/v1/runs")["runs"]}
            return "embedding" in runs.get("./b", {}) and "embedding" in runs.get("./a", {})

        wait_until(listed, timeout=120)
        yield served


@pytest.fixture
def board(browser: Browser, url: str, artifacts: Path) -> Iterator[BoardPage]:
    with watched_page(browser) as (page, _):
        yield BoardPage(page, url, artifacts)


def _traces(board: BoardPage, selector: str) -> list[dict[str, Any]]:
    return board.page.evaluate(
        """(selector) => [...document.querySelector(selector)
            .querySelector('.plot:not([hidden])').data]
            .map((t) => ({type: t.type, n: t.x.length, meta: t.meta, name: t.name,
                          hover: t.hovertemplate, z: t.z ? t.z.length : null}))""",
        selector,
    )


def test_pr_curves_are_drawn_per_run_with_a_step_slider(board: BoardPage) -> None:
    card = ".pr_curve-card[data-tag='cat']"
    board.open("/pr_curves")
    board.page.wait_for_selector(f"{card}[data-state='ready']", timeout=WAIT_MS)
    traces = _traces(board, card)
    assert sorted(t["meta"]["run"] for t in traces) == ["./a", "./b"]
    # no score reaches 1.0: the threshold 1.0 (TP = FP = 0) is left out, as in TensorBoard
    assert all(t["n"] == THRESHOLDS - 1 and t["meta"]["step"] == 1 for t in traces)
    assert all("threshold" in t["hover"] and "TP" in t["hover"] for t in traces)
    board.screenshot("pr_curves")
    draws = int(board.page.get_attribute(card, "data-draws"))
    slider = board.page.locator(f"{card} .step-slider").first
    slider.fill("0")  # the first run's slider to its first kept step
    board.page.wait_for_function(
        "([c, d]) => Number(document.querySelector(c).dataset.draws) > d",
        arg=[card, draws], timeout=WAIT_MS,
    )  # fmt: skip
    steps = sorted(t["meta"]["step"] for t in _traces(board, card))
    assert steps == [0, 1]


def test_a_bookmark_of_the_old_view_id_opens_the_pr_curves(board: BoardPage) -> None:
    """``#/prcurves`` (the view's id before it took the plugin's name) still opens the PR
    Curves view, with the rest of the link: here run ./a's curve picked at step 0."""
    card = ".pr_curve-card[data-tag='cat']"
    picked = quote(json.dumps([["pr_curve", "./a", None, "cat", 0]]))
    board.open(f"/prcurves?at={picked}")
    board.page.wait_for_selector(f"{card}[data-state='ready']", timeout=WAIT_MS)
    assert board.page.is_visible("#pr_curves-view")
    steps = {t["meta"]["run"]: t["meta"]["step"] for t in _traces(board, card)}
    assert steps == {"./a": 0, "./b": 1}


def test_an_embedding_is_a_scatter_with_search_and_3d(board: BoardPage) -> None:
    card = ".embedding-card[data-tag='words:00002']"
    page = board.page
    board.open("/embeddings")
    page.wait_for_selector(f"{card}[data-state='ready'][data-dims='2']", timeout=WAIT_MS)
    page.locator(card).scroll_into_view_if_needed()  # hovered and zoomed by the mouse
    assert page.get_attribute(card, "data-points") == str(POINTS)
    assert page.evaluate("window.Plotly === undefined")  # 2-D never loads plotly.js
    # the point labelled MARKUP (row 0) is painted where the scatter says, and hovering it
    # shows its label as text
    where = page.evaluate(
        """(card) => {
            const box = document.querySelector(card).querySelector('.scatter2d');
            const at = box.scatter.pointAt(0);
            const canvas = box.querySelector('canvas');
            const r = canvas.getBoundingClientRect();
            const ratio = canvas.width / r.width;
            const pixel = canvas.getContext('2d').getImageData(
                Math.round((at.x - r.left) * ratio), Math.round((at.y - r.top) * ratio), 1, 1);
            return {...at, alpha: pixel.data[3]};
        }""",
        card,
    )
    assert where["alpha"] > 0
    page.mouse.move(where["x"], where["y"])
    tip = page.locator(f"{card} .scatter2d-tip")
    tip.wait_for(state="visible")
    assert tip.text_content() == MARKUP and tip.locator("b").count() == 0
    board.screenshot("embeddings-2d-hover")
    # the wheel zooms around the cursor (point 0 stays put, point 1 moves), a double-click resets
    spots = "(c) => [0, 1].map((i) => document.querySelector(c + ' .scatter2d').scatter.pointAt(i))"
    home = page.evaluate(spots, card)
    page.mouse.wheel(0, -400)
    page.wait_for_function(f"([c, x]) => ({spots})(c)[1].x !== x", arg=[card, home[1]["x"]])
    zoomed = page.evaluate(spots, card)
    assert abs(zoomed[0]["x"] - home[0]["x"]) < 1 and abs(zoomed[0]["y"] - home[0]["y"]) < 1
    page.mouse.dblclick(where["x"], where["y"])
    page.wait_for_function(f"([c, x]) => ({spots})(c)[1].x === x", arg=[card, home[1]["x"]])
    draws = int(page.get_attribute(card, "data-draws"))
    page.select_option(f"{card} .embedding-colour", label="score")
    page.wait_for_selector(f"{card}[data-draws='{draws + 1}']")
    bar = page.locator(f"{card} .scatter2d-bar")
    assert bar.is_visible() and bar.locator("span").all_text_contents() == ["score", "1", "0"]
    page.fill(f"{card} .embedding-search", "word1")
    page.wait_for_selector(f"{card}[data-matches='{sum('word1' in w for w in LABELS)}']")
    board.screenshot("embeddings-2d-search")
    page.click(f"{card} [data-dims='3']")
    page.wait_for_selector(f"{card}[data-dims='3'][data-state='ready']")
    points, matches = _traces(board, card)
    assert (points["type"], points["n"], points["z"]) == ("scatter3d", POINTS, POINTS)
    assert matches["n"] == sum("word1" in label for label in LABELS)
    board.screenshot("embeddings-3d")


def test_thumbnails_are_drawn_in_2d(board: BoardPage) -> None:
    """An embedding written with ``label_img``: each point is its thumbnail (the centre of a
    point drawn clear of the others has its picture's colour), until Thumbnails is unticked;
    3-D says that thumbnails are drawn in 2-D."""
    card = ".embedding-card[data-tag='pictures:00001']"
    page = board.page
    board.open("/embeddings")
    page.wait_for_selector(f"{card}[data-state='ready'][data-dims='2']", timeout=WAIT_MS)
    scatter = f"{card} .scatter2d"
    assert page.get_attribute(scatter, "data-thumbnails") == "drawn"
    centres = page.evaluate(
        """([scatter, n]) => {
            const box = document.querySelector(scatter);
            const canvas = box.querySelector('canvas');
            const r = canvas.getBoundingClientRect();
            const ratio = canvas.width / r.width;
            const ctx = canvas.getContext('2d');
            return Array.from({length: n}, (_, i) => {
                const at = box.scatter.pointAt(i);
                const px = ctx.getImageData(Math.round((at.x - r.left) * ratio),
                                            Math.round((at.y - r.top) * ratio), 1, 1).data;
                return {x: at.x, y: at.y, rgb: [px[0], px[1], px[2]]};
            });
        }""",
        [scatter, PICTURES],
    )
    clear = [
        i
        for i, a in enumerate(centres)
        if all(max(abs(a["x"] - b["x"]), abs(a["y"] - b["y"])) > 26 for b in centres if b is not a)
    ]
    assert clear, "no point drawn clear of the others"
    for i in clear:
        assert np.abs(np.subtract(centres[i]["rgb"], SOLID[i % 4])).max() <= 8, i
    board.screenshot("embeddings-thumbnails")
    draws = int(page.get_attribute(card, "data-draws"))
    page.uncheck(f"{card} .embedding-thumbnails")
    page.wait_for_selector(f"{card}[data-draws='{draws + 1}']")
    assert page.get_attribute(scatter, "data-thumbnails") == "none"
    page.click(f"{card} [data-dims='3']")
    page.wait_for_selector(f"{card}[data-dims='3'][data-state='ready']")
    assert "Thumbnails are drawn in 2-D." in page.text_content(f"{card} .card-note")
