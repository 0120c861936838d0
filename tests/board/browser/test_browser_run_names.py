"""Run names at laptop width (1440 px), in Chromium, over the sweep a user's audit served:
24 runs ``torch/lr{0.1,0.01,0.001,0.0001}_seed{0..5}`` written by torch's own
``SummaryWriter`` with ``add_hparams`` (each with the sub-run torch names by the time).

In the run list and in the lineage table every name shows whole (no ellipsis: the text is
no wider than its box); sorted by name, numbers go by value (lr0.0001 < lr0.001 < lr0.01 <
lr0.1, never lr0.01 beside lr0.1) both ways. At a narrower width a name too long for its
column shows its end, where the runs of one directory differ. Screenshots of both views
at 1440 px are saved (``artifacts/run-names-*.png``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board_data import served_base
from helpers.board_page import WAIT_MS, BoardPage
from helpers.torch_sweep import LRS, SEEDS, write_sweep
from playwright.sync_api import Page

ROW_HEIGHT = 36  # px of a run list row (runs.css)
_RUN_ROWS = """() => [...document.querySelectorAll('.run-row:not([hidden])')].map((row) => {
    const link = row.querySelector('.run-link');
    return { index: Number(row.dataset.index), name: link.textContent,
             scroll: link.scrollWidth, client: link.clientWidth };
})"""
_LINEAGE_ROWS = """() => [...document.querySelectorAll('.lin-row:not([hidden])')]
    .sort((a, b) => a.dataset.index - b.dataset.index).map((row) => {
        const name = row.querySelector('.lin-run');
        return { name: name.textContent, scroll: name.scrollWidth, client: name.clientWidth };
    })"""
# whether the last character of each cut name lies inside its box (its end shows)
_ENDS_SHOWN = """() => [...document.querySelectorAll('.run-row:not([hidden]) .run-link')]
    .filter((link) => link.scrollWidth > link.clientWidth).map((link) => {
        const text = (link.querySelector('bdi') ?? link).firstChild;
        const last = document.createRange();
        last.setStart(text, text.length - 1);
        last.setEnd(text, text.length);
        const box = link.getBoundingClientRect();
        const at = last.getBoundingClientRect();
        return { name: link.textContent,
                 inside: at.left >= box.left - 0.5 && at.right <= box.right + 0.5 };
    })"""


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    base = tmp_path_factory.mktemp("sweep") / "base"
    runs = write_sweep(base)
    every = [p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_dir()]
    ids = sorted(f"./{path}" for path in every if path.count("/") >= 1)
    assert len(ids) == 2 * len(runs)  # each run and the sub-run add_hparams made
    with served_base(base, tmp_path_factory.mktemp("sweep-ws"), ids) as url:
        yield url, ids


def _natural(ids: list[str]) -> list[str]:
    """``ids`` in the order a user expects: each number by its value, a run before its
    sub-runs."""
    parts = re.compile(r"(\d+(?:\.\d+)?)")

    def key(name: str) -> list[tuple[int, float | str]]:
        return [(0, float(p)) if i % 2 else (1, p) for i, p in enumerate(parts.split(name)) if p]

    return sorted(ids, key=key)


def _every_row(page: Page, count: int) -> dict[int, dict]:
    """Each run row of the list (scrolled through), by index."""
    seen: dict[int, dict] = {}
    top = 0
    while len(seen) < count:
        page.evaluate("(top) => { document.querySelector('.viewport').scrollTop = top; }", top)
        first = min(top // ROW_HEIGHT, count - 1)
        page.wait_for_function(
            """(first) => [...document.querySelectorAll('.run-row:not([hidden])')]
                .some((row) => Number(row.dataset.index) === first)""",
            arg=first,
            timeout=WAIT_MS,
        )
        for row in page.evaluate(_RUN_ROWS):
            seen[row["index"]] = row
        top += 10 * ROW_HEIGHT
    return {index: seen[index] for index in sorted(seen)}


def _open_runs(page: Page, url: str, ids: list[str], artifacts: Path) -> BoardPage:
    board = BoardPage(page, url, artifacts)
    board.open("/runs")
    board.wait_runs_listed(ids[:3])
    return board


def test_the_run_list_shows_every_name_whole_at_1440_px(
    page: Page, sweep: tuple[str, list[str]], artifacts: Path
) -> None:
    url, ids = sweep
    board = _open_runs(page, url, ids, artifacts)
    rows = _every_row(page, len(ids))
    assert sorted(row["name"] for row in rows.values()) == ids
    cut = [row["name"] for row in rows.values() if row["scroll"] > row["client"]]
    assert cut == [], f"names cut at 1440 px: {cut}"
    page.evaluate("() => { document.querySelector('.viewport').scrollTop = 0; }")
    page.wait_for_selector('.run-row[data-index="0"]:not([hidden])')
    board.screenshot("run-names-runs-1440")


def test_the_run_list_sorts_names_with_their_numbers_by_value(
    page: Page, sweep: tuple[str, list[str]], artifacts: Path
) -> None:
    url, ids = sweep
    _open_runs(page, url, ids, artifacts)
    rows = _every_row(page, len(ids))
    assert [row["name"] for row in rows.values()] == _natural(ids)
    # the four learning rates in value order, each seed's run before its sub-run
    parents = [row["name"] for row in rows.values() if row["name"].count("/") == 2]
    assert parents == [f"./torch/lr{lr}_seed{seed}" for lr in sorted(LRS) for seed in SEEDS]

    page.locator(".sort", has_text="Run").click()  # descending: the exact reverse
    page.wait_for_function(
        "(first) => document.querySelector('.run-row[data-index=\"0\"] .run-link')"
        "?.textContent === first",
        arg=_natural(ids)[-1],
        timeout=WAIT_MS,
    )
    rows = _every_row(page, len(ids))
    assert [row["name"] for row in rows.values()] == _natural(ids)[::-1]


def test_a_name_too_long_for_a_narrow_list_shows_its_end(
    page: Page, sweep: tuple[str, list[str]], artifacts: Path
) -> None:
    url, ids = sweep
    page.set_viewport_size({"width": 1000, "height": 900})
    board = _open_runs(page, url, ids, artifacts)
    ends = page.evaluate(_ENDS_SHOWN)
    assert ends, "no name is cut at 1000 px: the test shows nothing"
    assert all(end["inside"] for end in ends), ends
    assert {row["name"] for row in page.evaluate(_RUN_ROWS)} <= set(ids)  # whole in the DOM
    board.screenshot("run-names-runs-1000")


def _lineage_first(page: Page, run: str) -> None:
    page.wait_for_function(
        "(first) => document.querySelector('.lin-row[data-index=\"0\"] .lin-run')"
        "?.textContent === first",
        arg=run,
        timeout=WAIT_MS,
    )


def test_the_lineage_table_shows_every_name_whole_in_natural_order(
    page: Page, sweep: tuple[str, list[str]], artifacts: Path
) -> None:
    url, ids = sweep
    runs = [run for run in ids if run.count("/") == 2]  # the sub-runs are their parents' rows
    page.set_viewport_size({"width": 1440, "height": 1800})  # every row in view at once
    board = BoardPage(page, url, artifacts)
    board.open("/lineage")
    page.wait_for_function(
        "(n) => document.querySelectorAll('.lin-row:not([hidden])').length === n",
        arg=len(runs),
        timeout=WAIT_MS,
    )
    page.locator('.lin-sort[data-col="run"]').click()
    _lineage_first(page, _natural(runs)[0])
    rows = page.evaluate(_LINEAGE_ROWS)
    assert [row["name"] for row in rows] == _natural(runs)
    assert [row["name"] for row in rows if row["scroll"] > row["client"]] == []
    page.locator('.lin-sort[data-col="run"]').click()  # descending
    _lineage_first(page, _natural(runs)[-1])
    assert [row["name"] for row in page.evaluate(_LINEAGE_ROWS)] == _natural(runs)[::-1]
    page.locator('.lin-sort[data-col="run"]').click()  # unsorted: the table's order
    page.set_viewport_size({"width": 1440, "height": 900})
    page.wait_for_selector(".lin-scatter-plot:not([data-draws='0'])")
    board.screenshot("run-names-lineage-1440")


WIDE = [f"./experiments/resnet50_cifar10_augmented/lr{lr}_seed{seed}" for lr in (0.1, 0.01)
        for seed in (0, 1)]  # fmt: skip
"""Long run names of a sweep with many hyper-parameters: a table wider than the page."""


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from torch.utils.tensorboard import SummaryWriter

    base = tmp_path_factory.mktemp("wide") / "base"
    for index, run in enumerate(WIDE):
        with SummaryWriter(str(base / run.removeprefix("./"))) as writer:
            writer.add_scalar("loss", 1.0, 0)
            hparams = {f"param_{i:02d}": index * 100 + i for i in range(14)}
            writer.add_hparams(hparams, {"hparam/accuracy": index / 10})
    with served_base(base, tmp_path_factory.mktemp("wide-ws"), WIDE) as url:
        yield url


def test_a_wide_lineage_table_keeps_long_names_whole(
    page: Page, wide: str, artifacts: Path
) -> None:
    board = BoardPage(page, wide, artifacts)
    board.open("/lineage")
    page.wait_for_function(
        "(n) => document.querySelectorAll('.lin-row:not([hidden])').length === n",
        arg=len(WIDE),
        timeout=WAIT_MS,
    )
    table = page.evaluate(
        "() => { const t = document.querySelector('.lin-table');"
        " return [t.scrollWidth, t.clientWidth]; }"
    )
    assert table[0] > table[1]  # more columns than the page holds: it scrolls sideways
    rows = page.evaluate(_LINEAGE_ROWS)
    assert sorted(row["name"] for row in rows) == sorted(WIDE)
    assert [row["name"] for row in rows if row["scroll"] > row["client"]] == []
    page.wait_for_selector(".lin-scatter-plot:not([data-draws='0'])")
    board.screenshot("run-names-lineage-wide-1440")
