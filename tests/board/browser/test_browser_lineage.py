"""The Lineage view in Chromium, over the golden MindSpore runs and runs our writer made at
three learning rates (plus one named like markup).

The model lineage table lists every run with its learning rate and accuracy; it sorts, a
range filter and a real mouse drag along a parallel-coordinates axis filter it (and the
URL keeps them across a reload); a hidden run leaves it; the CSV export holds the rows
shown; selected runs open in Scalars; the data lineage draws the pipelines and highlights
where they differ. Every wait is on a condition in the page with a bound.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from helpers.board import free_port, running_server, wait_until
from helpers.board_page import WAIT_MS
from helpers.collector_runs import COLLECTOR_RATES, write_collector_runs
from helpers.lineage_data import (
    GOLDEN,
    WRITTEN,
    XSS_LINEAGE,
    XSS_RUN,
    lineage_ready,
    write_lineage_base,
)
from playwright.sync_api import Page

from sumlens.board.settings import BoardSettings

RATES = {
    **{run: values[0] for run, values in GOLDEN.items()},
    **{run: values[0] for run, values in WRITTEN.items()},
    XSS_RUN: XSS_LINEAGE[0],
    **COLLECTOR_RATES,
}
ACCURACY = {
    **{run: values[1] for run, values in GOLDEN.items()},
    **{run: values[1] for run, values in WRITTEN.items()},
    XSS_RUN: XSS_LINEAGE[1],
}
ROWS = ".lin-row:not([hidden])"
_SHOWN = f"""() => [...document.querySelectorAll('{ROWS}')]
    .sort((a, b) => a.dataset.index - b.dataset.index)
    .map((row) => Object.fromEntries([...row.querySelectorAll('[data-col]')]
        .map((cell) => [cell.dataset.col, cell.dataset.col === 'run'
            ? cell.querySelector('.lin-run').textContent : cell.textContent])))"""


@pytest.fixture(scope="module")
def lineage_base(
    tmp_path_factory: pytest.TempPathFactory, golden_dir: Path
) -> tuple[Path, dict[str, float]]:
    """The base directory, and the accuracy of each run SummaryCollector recorded."""
    base = tmp_path_factory.mktemp("lineage-browser") / "base"
    write_lineage_base(base, golden_dir)
    trained = write_collector_runs(base)
    return base, {run: accuracy for run, (_, accuracy) in trained.items()}


@pytest.fixture(scope="module")
def lineage_url(
    lineage_base: tuple[Path, dict[str, float]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    base, _ = lineage_base
    settings = BoardSettings.create(
        base,
        port=free_port(),
        reload_interval=0.5,
        workspace=tmp_path_factory.mktemp("lineage-browser-workspace"),
    )
    with running_server(settings) as url:
        wait_until(lambda: lineage_ready(url, list(RATES)), timeout=60)
        yield url


def open_lineage(page: Page, url: str, query: str = "") -> None:
    page.goto(f"{url}/#/lineage{query}")
    page.wait_for_function(
        f"(n) => document.querySelectorAll('{ROWS}').length === n", arg=len(RATES), timeout=WAIT_MS
    )


def shown(page: Page) -> list[dict[str, str]]:
    """The rows of the table, top to bottom, as {column id: text}."""
    return page.evaluate(_SHOWN)


def wait_rows(page: Page, count: int) -> list[dict[str, str]]:
    page.wait_for_function(
        f"(n) => document.querySelectorAll('{ROWS}').length === n", arg=count, timeout=WAIT_MS
    )
    return shown(page)


def settings(page: Page) -> dict[str, Any]:
    """The view's settings in the URL (state.lineage)."""
    found = page.evaluate("() => new URLSearchParams(location.hash.split('?')[1] ?? '').get('lin')")
    return json.loads(found) if found else {}


def number(text: str) -> float | None:
    return float(text) if text else None


def test_table_lists_every_run_with_its_values(
    page: Page, lineage_url: str, lineage_base: tuple[Path, dict[str, float]], artifacts: Path
) -> None:
    accuracy = {**ACCURACY, **lineage_base[1]}  # SummaryCollector's runs: what Model.eval said
    open_lineage(page, lineage_url)
    rows = shown(page)
    assert [row["run"] for row in rows] == sorted(RATES)  # the server's order: by id
    for row in rows:
        assert number(row["learning_rate"]) == pytest.approx(RATES[row["run"]])
        expected = accuracy[row["run"]]
        assert number(row["metric/accuracy"]) == (
            None if expected is None else pytest.approx(expected)
        )
    # the run named like markup is text: no image element, no dialog (the fixture checks)
    assert page.evaluate("() => document.querySelectorAll('.lin-table img').length") == 0
    assert XSS_RUN in [row["run"] for row in rows]
    assert page.locator(".lin-pc-name").count() >= 3
    page.wait_for_function(
        "() => Number(document.querySelector('.lin-scatter-plot').dataset.draws) > 0"
    )
    page.screenshot(path=str(artifacts / "lineage-model.png"))


def test_sorting_and_a_range_filter_kept_across_a_reload(page: Page, lineage_url: str) -> None:
    open_lineage(page, lineage_url)
    header = page.locator('.lin-sort[data-col="learning_rate"]')
    header.click()
    page.wait_for_function("() => location.hash.includes('sort')")
    rates = [number(row["learning_rate"]) for row in shown(page)]
    assert rates == sorted(rates)
    header.click()
    page.wait_for_function("() => location.hash.includes('%2C-1') || location.hash.includes(',-1')")
    rates = [number(row["learning_rate"]) for row in shown(page)]
    assert rates == sorted(rates, reverse=True)
    low = page.locator('.lin-lo[data-col="learning_rate"]')
    low.fill("0.01")
    low.press("Enter")
    expected = sorted((r for r in RATES.values() if r >= 0.01), reverse=True)
    rows = wait_rows(page, len(expected))
    assert [number(row["learning_rate"]) for row in rows] == expected
    page.reload()
    rows = wait_rows(page, len(expected))
    assert [number(row["learning_rate"]) for row in rows] == expected
    assert page.locator('.lin-lo[data-col="learning_rate"]').input_value() == "0.01"


def test_brushing_an_axis_filters_the_table(page: Page, lineage_url: str, artifacts: Path) -> None:
    open_lineage(page, lineage_url)
    label = page.locator('.lin-pc-name[data-col="learning_rate"]')
    chart = page.locator(".lin-pc").bounding_box()
    box = label.bounding_box()
    assert chart is not None and box is not None
    x = box["x"] + box["width"] / 2
    page.mouse.move(x, chart["y"] + 40)
    page.mouse.down()
    page.mouse.move(x, chart["y"] + 90, steps=5)
    page.mouse.move(x, chart["y"] + 130, steps=5)
    page.mouse.up()
    page.wait_for_function("() => location.hash.includes('learning_rate')")
    brush = settings(page)["f"]["learning_rate"]
    lo, hi = brush
    expected = sorted(run for run, rate in RATES.items() if lo <= rate <= hi)
    assert 0 < len(expected) < len(RATES)  # the drag covered the top values only
    rows = wait_rows(page, len(expected))
    assert sorted(row["run"] for row in rows) == expected
    page.screenshot(path=str(artifacts / "lineage-brushed.png"))
    # a click on the axis clears its brush
    page.mouse.click(x, chart["y"] + 150)
    wait_rows(page, len(RATES))
    assert "learning_rate" not in settings(page).get("f", {})


def test_hiding_a_run_and_the_csv_export(page: Page, lineage_url: str) -> None:
    open_lineage(page, lineage_url)
    hidden = "./collector"
    row = page.locator(f'{ROWS}[data-run="{hidden}"]')
    row.hover()
    row.locator(".lin-hide").click()
    rows = wait_rows(page, len(RATES) - 1)
    assert hidden not in [r["run"] for r in rows]
    assert page.locator(".lin-unhide").is_visible()
    with page.expect_download() as download:
        page.locator(".lin-export").click()
    text = Path(download.value.path()).read_text()
    records = list(csv.DictReader(io.StringIO(text)))
    assert [r["run"] for r in records] == [r["run"] for r in rows]
    for record, shown_row in zip(records, rows, strict=True):
        assert float(record["learning_rate"]) == pytest.approx(
            number(shown_row["learning_rate"]), rel=1e-5
        )
        assert set(record) == set(shown_row)
    page.locator(".lin-unhide").click()
    wait_rows(page, len(RATES))


def test_selected_runs_open_in_scalars(page: Page, lineage_url: str) -> None:
    open_lineage(page, lineage_url)
    picked = ["./sweep/lr_0.1", "./sweep/lr_0.01"]
    for run in picked:
        page.locator(f'{ROWS}[data-run="{run}"] .lin-check input').check()
    page.wait_for_function(
        "() => document.querySelector('.lin-open').textContent.includes('2 runs')"
    )
    page.locator(".lin-open").click()
    page.wait_for_function("() => location.hash.startsWith('#/scalars')")
    hash_runs = page.evaluate(
        "() => new URLSearchParams(location.hash.split('?')[1]).getAll('run')"
    )
    assert hash_runs == picked
    assert page.locator("#scalars-view").is_visible()
    page.wait_for_function(
        """() => [...document.querySelectorAll('#scalars-view .card')]
            .some((c) => c.dataset.tag === 'loss')"""
    )


def test_data_lineage_draws_and_compares_pipelines(
    page: Page, lineage_url: str, artifacts: Path
) -> None:
    runs = ["./sweep/lr_0.1", "./sweep/lr_0.01", "./collector"]
    query = "".join(f"&run={quote(run)}" for run in runs)
    page.goto(f"{lineage_url}/#/lineage?lin={quote(json.dumps({'tab': 'data'}))}{query}")
    page.wait_for_function("(n) => document.querySelectorAll('.pipe-figure').length === n", arg=3)
    figures = page.evaluate(
        """() => [...document.querySelectorAll('.pipe-figure')].map((f) => ({
            run: f.dataset.run,
            ops: [...f.querySelectorAll('.pipe-op-name')].map((n) => n.textContent) }))"""
    )
    assert figures == [
        {"run": runs[0], "ops": ["MnistDataset", "Shuffle", "Batch"]},
        {"run": runs[1], "ops": ["MnistDataset", "Shuffle", "Batch"]},
        {"run": runs[2], "ops": ["GeneratorDataset", "Batch"]},
    ]
    compare = page.evaluate(
        """() => [...document.querySelectorAll('.pipe-compare tbody tr')].map((tr) => ({
            step: tr.dataset.step, param: tr.dataset.param,
            differs: tr.classList.contains('differs'),
            values: [...tr.querySelectorAll('td:not(.pipe-param)')]
                .map((td) => td.textContent) }))"""
    )
    by_key = {(row["step"], row["param"]): row for row in compare}
    batch = by_key[("Batch#1", "batch_size")]
    assert batch["values"] == ["32", "64", "4"] and batch["differs"]
    buffer = by_key[("Shuffle#1", "buffer_size")]
    assert buffer["values"] == ["1000", "1000", "—"] and buffer["differs"]
    page.screenshot(path=str(artifacts / "lineage-data.png"))
    two = "".join(f"&run={quote(run)}" for run in runs[:2])
    page.goto(f"{lineage_url}/#/lineage?lin={quote(json.dumps({'tab': 'data'}))}{two}")
    page.wait_for_function("() => document.querySelectorAll('.pipe-figure').length === 2")
    same = page.evaluate(
        """() => [...document.querySelectorAll('.pipe-compare tbody tr')]
            .filter((tr) => tr.dataset.param === 'buffer_size')
            .map((tr) => tr.classList.contains('differs'))"""
    )
    assert same == [False]
