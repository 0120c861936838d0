"""Auto-refresh in Chromium: a writer process appends while the page is open."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.board import wait_until
from helpers.board_data import get_json
from helpers.board_page import WAIT_MS, BoardPage

WRITER = Path(__file__).parents[2] / "helpers" / "append_writer.py"
ZOOM = [20, 160]


class Writer:
    """``append_writer.py`` on a log directory, appending steps on request."""

    def __init__(self, log_dir: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(WRITER), str(log_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def append(self, steps: int) -> int:
        """Write ``steps`` more steps and wait until they are on disk: the last step."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{steps}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"the writer process ended (exit code {self.process.poll()})"
        return int(line)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=60) == 0


@pytest.fixture
def writer(board_base: Path) -> Iterator[Writer]:
    process = Writer(board_base / "growing")
    try:
        yield process
    finally:
        process.close()


def _points(url: str, run_id: str) -> int:
    runs = {run["id"]: run for run in get_json(f"{url}/api/v1/runs")["runs"]}
    return runs[run_id]["points"] if run_id in runs else 0


def test_new_points_appear_keeping_zoom_and_selection(board: BoardPage, writer: Writer) -> None:
    assert writer.append(100) == 100
    wait_until(lambda: _points(board.url, "./growing") == 100, timeout=60)
    board.open("/scalars?run=./growing&run=./ours/ms&tags=^loss$")
    draws = board.wait_drawn("loss")
    board.relayout("loss", {"xaxis.range": ZOOM})
    board.wait_drawn("loss", after=draws)
    before = board.page.evaluate("location.hash")
    board.page.evaluate("() => performance.setResourceTimingBufferSize(100000)")

    assert writer.append(30) == 130
    wait_until(lambda: _points(board.url, "./growing") == 130, timeout=60)
    on_server = board.page.evaluate("() => performance.now()")
    # Until the chart shows step 130, then how many /runs polls the page began meanwhile.
    polls = board.page.wait_for_function(
        """([since, last]) => {
            const card = document.querySelector('.card[data-tag=loss]');
            const trace = card.querySelector('.plot').data
                ?.find((t) => t.meta.run === './growing' && t.meta.kind === 'smoothed');
            if (!trace || trace.x[trace.x.length - 1] !== last) return false;
            return performance.getEntriesByType('resource')
                .filter((e) => e.name.endsWith('/api/v1/runs') && e.startTime > since).length;
        }""",
        arg=[on_server, 130],
        timeout=WAIT_MS,
    ).json_value()
    # The page re-draws on the first poll that sees the new points: no later than the second
    # poll begun after they reached the server (its period is the server's reload interval).
    assert polls <= 2
    (growing,) = (
        t for t in board.traces("loss") if t["run"] == "./growing" and t["kind"] == "smoothed"
    )
    assert growing["x"] == list(range(ZOOM[0], 131))
    assert board.layout("loss")["xaxis"]["range"] == ZOOM
    assert board.page.evaluate("location.hash") == before
    assert board.page.evaluate(
        "() => [...document.querySelectorAll('.run-legend .run-name')].map((e) => e.textContent)"
    ) == ["./growing", "./ours/ms"]
    board.screenshot("scalars-refresh")
