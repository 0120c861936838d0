"""TensorBoard's hyper-parameters in the Lineage view, in Chromium, over runs the real
libraries wrote: torch's ``SummaryWriter`` calling every method (``add_hparams`` among
them), two more torch runs of ``add_hparams`` at other learning rates, and Lightning's
``TensorBoardLogger`` with ``log_hyperparams``.

Each run is one row (the sub-run ``add_hparams`` names by the time is its parent's) listing
its hyper-parameters and metrics as the libraries wrote them; the hyper-parameters are
columns of their kind, axes of the parallel coordinates and the scatter's x against a
metric. The run dashboard's lineage card says the run recorded hyper-parameters. Every
wait is on a condition in the page with a bound.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers.board import free_port, get_json, running_server, wait_until
from helpers.board_page import WAIT_MS
from helpers.tb_logs import (
    HPARAMS,
    HPARAMS_METRICS,
    LIGHTNING_HPARAMS_METRICS,
    lightning_tensorboard_run,
    torch_every_method,
)
from playwright.sync_api import Page

from sumlens.board.settings import BoardSettings

SWEEP = {"./sweep_lr_0.01": (0.01, 0.6), "./sweep_lr_0.001": (0.001, 0.7)}
"""More ``add_hparams`` runs: learning rate and accuracy."""
TORCH = "./torch"
LIGHTNING = "./lightning/tb/version_0"
RUNS = sorted([TORCH, LIGHTNING, *SWEEP])
ROWS = ".lin-row:not([hidden])"
_SHOWN = f"""() => Object.fromEntries([...document.querySelectorAll('{ROWS}')]
    .map((row) => [row.dataset.run, Object.fromEntries([...row.querySelectorAll('[data-col]')]
        .filter((cell) => cell.dataset.col !== 'run')
        .map((cell) => [cell.dataset.col, cell.textContent]))]))"""


def _sweep_run(log_dir: Path, learning_rate: float, accuracy: float) -> None:
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(log_dir)) as writer:
        writer.add_scalar("loss", 1.0, 0)
        writer.add_hparams(
            {**HPARAMS, "lr": learning_rate}, {**HPARAMS_METRICS, "hp/acc": accuracy}
        )


@pytest.fixture(scope="module")
def hparams_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("lineage-hparams") / "base"
    torch_every_method(base / "torch")
    assert lightning_tensorboard_run(base / "lightning") == base / LIGHTNING.removeprefix("./")
    for run, (learning_rate, accuracy) in SWEEP.items():
        _sweep_run(base / run.removeprefix("./"), learning_rate, accuracy)
    settings = BoardSettings.create(
        base, port=free_port(), workspace=tmp_path_factory.mktemp("lineage-hparams-workspace")
    )
    with running_server(settings) as url:

        def ready() -> bool:
            """Every run listed, Lightning's last session read (its two sessions are in two
            files: the first one read alone shows its first hyper-parameters)."""
            found = get_json(f"{url}/api/v1/lineage")
            if not found or sorted(found["runs"]) != RUNS:
                return False
            return any(column["id"] == "hparam/batch" for column in found["columns"])

        wait_until(ready, timeout=60)
        yield url


def test_lineage_lists_the_hyper_parameters_and_metrics(
    page: Page, hparams_url: str, artifacts: Path
) -> None:
    view = {"x": "hparam/lr", "y": "metric/hp/acc"}
    page.goto(f"{hparams_url}/#/lineage?lin={quote(json.dumps(view))}")
    page.wait_for_function(
        f"(n) => document.querySelectorAll('{ROWS}').length === n", arg=len(RUNS), timeout=WAIT_MS
    )
    rows = page.evaluate(_SHOWN)
    assert sorted(rows) == RUNS  # the sub-runs of add_hparams are no rows of their own
    torch_rates = {TORCH: HPARAMS["lr"], **{run: rate for run, (rate, _) in SWEEP.items()}}
    torch_accuracy = {TORCH: HPARAMS_METRICS["hp/acc"], **{r: a for r, (_, a) in SWEEP.items()}}
    for run, rate in torch_rates.items():
        row = rows[run]
        assert float(row["hparam/lr"]) == pytest.approx(rate)
        assert float(row["hparam/layers"]) == HPARAMS["layers"]
        assert row["hparam/opt"] == HPARAMS["opt"]
        assert float(row["metric/hp/acc"]) == pytest.approx(torch_accuracy[run])
        assert float(row["metric/hp/loss"]) == pytest.approx(HPARAMS_METRICS["hp/loss"])
        assert row["session_status"] == "success"
        assert row["hparam/batch"] == ""
    lightning = rows[LIGHTNING]
    assert (float(lightning["hparam/batch"]), float(lightning["hparam/seed"])) == (8, 0)
    for tag, value in LIGHTNING_HPARAMS_METRICS.items():
        assert float(lightning[f"metric/{tag}"]) == pytest.approx(value)
    assert lightning["hparam/lr"] == ""
    # the hyper-parameters are columns of their kind, axes where they differ, the scatter's x
    header = page.locator('.lin-sort[data-col="hparam/lr"]')
    assert header.text_content() == "lr" and "kind-hyper" in (header.get_attribute("class") or "")
    for column in ("hparam/lr", "metric/hp/acc"):
        assert page.locator(f'.lin-pc-name[data-col="{column}"]').count() == 1
    page.wait_for_function(
        "() => document.querySelector('.lin-scatter-plot').dataset.points === '3'",
        timeout=WAIT_MS,
    )
    page.screenshot(path=str(artifacts / "lineage-hparams.png"), full_page=True)


def test_the_run_dashboard_says_the_run_recorded_hyper_parameters(
    page: Page, hparams_url: str
) -> None:
    page.goto(f"{hparams_url}/#/run?run={quote(LIGHTNING, safe='')}")
    items = page.locator("#run-view .dash-card[data-plugin=lineage] .presence-list li")
    items.first.wait_for(timeout=WAIT_MS)
    assert items.all_text_contents() == ["Hyper-parameter lineage"]
