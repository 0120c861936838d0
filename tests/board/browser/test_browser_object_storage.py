"""A bucket in Chromium: the page over ``s3://`` (moto's server on 127.0.0.1) shows what
each reload costs beside the base directory, and a writer's flushed steps as they arrive."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import free_port, running_server, wait_until
from helpers.board_page import WAIT_MS, BoardPage
from helpers.s3 import bucket_server, s3_options
from playwright.sync_api import Page

from sumlens import SummaryRecord
from sumlens.board.settings import BoardSettings

BUCKET = "page-runs"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with bucket_server(BUCKET) as url:
        yield url


def test_a_bucket_shows_its_reload_cost_and_a_writers_new_steps(
    page: Page, endpoint: str, tmp_path: Path, artifacts: Path
) -> None:
    options = s3_options(endpoint)
    base = f"s3://{BUCKET}/team"
    writer = SummaryRecord(f"{base}/live", storage_options=options, spool_dir=tmp_path / "spool")
    settings = BoardSettings.create(
        base, port=free_port(), reload_interval=0.3, workspace=tmp_path / "ws",
        storage_options=options,
    )  # fmt: skip
    try:
        writer.add_value("scalar", "loss", 1.0)
        writer.record(0)
        writer.flush()
        with running_server(settings) as url:
            board = BoardPage(page, url, artifacts)
            board.open("/runs")
            board.wait_runs_listed(["./live"])
            cost = page.locator("#storage-requests")
            cost.wait_for(state="visible", timeout=WAIT_MS)
            wait_until(lambda: "1 listing · 0 GETs · 0 B" in cost.inner_text(), timeout=30)
            assert "Since the server started" in (cost.get_attribute("title") or "")
            assert page.locator("#base-dir").inner_text() == base
            for step in range(1, 4):
                writer.add_value("scalar", "loss", 1.0 / (step + 1))
                writer.record(step)
            writer.flush()
            board.open("/scalars?run=./live&tags=^loss$")
            board.wait_drawn("loss")
            wait_until(lambda: max(board.traces("loss")[0]["x"]) == 3, timeout=30)
            board.screenshot("object_storage_scalars")
            page.goto("about:blank")  # no poll of a server that is stopping
    finally:
        writer.close()
