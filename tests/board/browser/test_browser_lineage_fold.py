"""The Lineage view in Chromium over runs recording each hyper-parameter under several
names (:mod:`helpers.hparam_aliases`: sumlens' ``add_hparams`` and Lightning adapter,
torch's writer).

The table has one column per quantity (``lr``, not ``learning rate`` and ``lr`` twice); a
header says which fields it holds, a cell which of them held that run's value. The scatter
plots, by default, the first metric against the hyper-parameter that varies most (``lr``,
not the constant or the seed), on a log axis since it spans decades; a link naming a
field folded into a column still finds it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers.board import free_port, get_json, running_server, wait_until
from helpers.board_page import WAIT_MS, BoardPage
from helpers.hparam_aliases import HPARAMS, write_alias_runs
from playwright.sync_api import Page

from sumlens.board.settings import BoardSettings

_HEADERS = """() => [...document.querySelectorAll('.lin-head .lin-sort')].map((button) => ({
    col: button.dataset.col, label: button.textContent, title: button.title }))"""
_CELL_TITLES = """(col) => Object.fromEntries(
    [...document.querySelectorAll('.lin-row:not([hidden])')].map((row) => [row.dataset.run,
        row.querySelector(`.lin-cell[data-col="${col}"]`).title]))"""
_SCATTER = """() => { const plot = document.querySelector('.lin-scatter-plot');
    return { x: document.querySelector('[aria-label="Scatter x axis"]').value,
             y: document.querySelector('[aria-label="Scatter y axis"]').value,
             log: document.querySelector('.lin-scatter-controls [type="checkbox"]').checked,
             type: plot.layout?.xaxis?.type, points: Number(plot.dataset.points),
             draws: Number(plot.dataset.draws) }; }"""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("lineage-fold") / "base"
    runs = write_alias_runs(base)
    settings = BoardSettings.create(
        base, port=free_port(), workspace=tmp_path_factory.mktemp("lineage-fold-ws")
    )
    with running_server(settings) as served:

        def ready() -> bool:
            table = get_json(f"{served}/api/v1/lineage")
            columns = {c["id"] for c in (table or {}).get("columns", [])}
            return (
                bool(table)
                and sorted(table["runs"]) == sorted(runs)
                and ("metric/hp/acc" in columns)
            )

        wait_until(ready, timeout=60)
        yield served


def _open(page: Page, url: str, artifacts: Path, settings: dict | None = None) -> BoardPage:
    board = BoardPage(page, url, artifacts)
    board.open("/lineage" + (f"?lin={quote(json.dumps(settings))}" if settings else ""))
    page.wait_for_function(
        "(n) => document.querySelectorAll('.lin-row:not([hidden])').length === n",
        arg=len(HPARAMS),
        timeout=WAIT_MS,
    )
    page.wait_for_function(
        "() => Number(document.querySelector('.lin-scatter-plot').dataset.draws) > 0",
        timeout=WAIT_MS,
    )
    return board


def test_one_column_per_hyper_parameter_says_where_each_value_came_from(
    page: Page, url: str, artifacts: Path
) -> None:
    board = _open(page, url, artifacts)
    headers = page.evaluate(_HEADERS)
    labels = [h["label"] for h in headers]
    assert len(labels) == len(set(labels)), labels  # no quantity twice
    assert {h["col"]: h["label"] for h in headers if h["col"].startswith("hparam/")} == {
        "hparam/lr": "lr",
        "hparam/optimizer": "optimizer",
        "hparam/batch_size": "batch_size",
        "hparam/seed": "seed",
    }
    assert not {"learning rate", "batch size", "epochs"} & set(labels)
    lr = next(h for h in headers if h["col"] == "hparam/lr")
    assert lr["title"] == (
        "lr (hyper-parameter, number; one column for lr (TensorBoard hparams), learning rate "
        "(train lineage), lr (custom lineage)): click to sort"
    )
    titles = page.evaluate(_CELL_TITLES, "hparam/lr")
    every = "lr (TensorBoard hparams), learning rate (train lineage), lr (custom lineage)"
    assert titles == {
        "./ours/lr0.1": f"0.1 from {every}",
        "./ours/lr0.01": f"0.01 from {every}",
        "./lightning/version_0": f"0.001 from {every}",
        "./torch/lr0.5": "0.5 from lr (TensorBoard hparams)",
    }
    board.screenshot("lineage-folded")


def test_the_default_scatter_is_the_first_metric_against_the_most_varied_hyper_parameter(
    page: Page, url: str, artifacts: Path
) -> None:
    _open(page, url, artifacts)
    shown = page.evaluate(_SCATTER)
    assert (shown["y"], shown["x"]) == ("metric/hp/acc", "hparam/lr")
    assert shown["log"] and shown["type"] == "log"  # 0.001 to 0.5: more than two decades
    assert shown["points"] == len(HPARAMS)

    # unticked, it stays linear; picking another x keeps the choice of the log box
    page.get_by_label("Log x axis").uncheck()
    page.wait_for_function(
        "() => document.querySelector('.lin-scatter-plot').layout?.xaxis?.type === 'linear'",
        timeout=WAIT_MS,
    )
    page.select_option('[aria-label="Scatter x axis"]', "hparam/batch_size")
    page.wait_for_function(
        """() => document.querySelector('.lin-scatter-plot').layout?.xaxis?.title?.text
            === 'batch_size'""",
        timeout=WAIT_MS,
    )
    assert not page.evaluate(_SCATTER)["log"]


def test_a_link_naming_a_folded_field_finds_its_column(
    page: Page, url: str, artifacts: Path
) -> None:
    settings = {"x": "learning_rate", "y": "metric/hp/acc", "cols": ["batch_size", "custom/lr"]}
    _open(page, url, artifacts, settings)
    assert page.evaluate(_SCATTER)["x"] == "hparam/lr"
    columns = [h["col"] for h in page.evaluate(_HEADERS)]
    assert columns == ["run", "hparam/batch_size", "hparam/lr"]
