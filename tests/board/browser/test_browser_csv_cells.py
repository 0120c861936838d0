"""CSV files the pages write never carry a formula, in Chromium (issue 25, item 18's page
part).

The page's one helper (``static/core/csv.js``, evaluated in Chromium as the server sends it) and
the server's (``sumlens.board.csv_cells.safe_cell``) neutralise the same text cells the same
way; the lineage view's "Export CSV" of a run whose lineage holds a formula writes it as
text, while a negative number stays a number.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import free_port, running_server, wait_until
from helpers.board_page import WAIT_MS
from helpers.lineage_data import lineage_ready
from playwright.sync_api import Page

from sumlens import SummaryRecord
from sumlens.board.csv_cells import safe_cell
from sumlens.board.settings import BoardSettings
from sumlens.lineage import UserDefinedInfo

FORMULA = '=HYPERLINK("http://evil.example","click")'
CELLS = [
    FORMULA,
    "+1",
    "-0.5",
    "@SUM(A1:A2)",
    "\tindented",
    "\rreturned",
    "=",
    "-",
    "plain",
    "",
    " =after a space",
    "a=b",
    "'quoted",
    "\n=after a newline",
    "\u2212minus sign",
    "ünï=côdé",
]
"""Text cells both helpers get: formulas by each first character, and look-alikes that are not."""
RUN = "./formula"


@pytest.fixture(scope="module")
def formula_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server over one run whose lineage holds a formula (text) and -0.5 (a number)."""
    root = tmp_path_factory.mktemp("csv-cells")
    with SummaryRecord(root / "base" / RUN[2:]) as record:
        record.add_value("scalar", "loss", 0.5)
        info = UserDefinedInfo({"note": FORMULA, "delta": -0.5})
        record.add_value("custom_lineage_data", "custom_lineage_data", info)
        record.record(1)
    settings = BoardSettings.create(root / "base", port=free_port(), workspace=root / "ws")
    with running_server(settings) as url:
        wait_until(lambda: lineage_ready(url, [RUN]), timeout=60)
        yield url


def test_page_and_server_neutralise_the_same_cells(page: Page, formula_url: str) -> None:
    page.goto(f"{formula_url}/")
    in_page = page.evaluate(
        """async (cells) => {
            const csv = await import(new URL('static/core/csv.js', document.baseURI).href);
            return cells.map((cell) => csv.safeCell(cell));
        }""",
        CELLS,
    )
    assert in_page == [safe_cell(cell) for cell in CELLS]
    assert in_page[0] == "'" + FORMULA and in_page[8] == "plain"


def test_lineage_export_writes_a_formula_as_text(page: Page, formula_url: str) -> None:
    page.goto(f"{formula_url}/#/lineage")
    page.wait_for_function(
        "() => document.querySelectorAll('.lin-row:not([hidden])').length === 1",
        timeout=WAIT_MS,
    )
    with page.expect_download() as download:
        page.locator(".lin-export").click()
    (record,) = csv.DictReader(io.StringIO(Path(download.value.path()).read_text()))
    assert record["custom/note"] == "'" + FORMULA  # text: a spreadsheet shows it as written
    assert record["custom/delta"] == "-0.5"  # a number: left alone
    assert record["run"] == RUN
