"""An interrupted landscape resumes from its cached blocks and gives the same surface.

Both runs count the points every process evaluates (through the loss calls), so
"re-evaluated" is measured, not inferred: it is what the two runs evaluated together
beyond the points of the landscape.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.landscape import COUNT_DIR_ENV, counting, points_evaluated, trained_states

from sumlens.landscape import BlockDone, LossLandscape, compute_landscape

SIZE = 8
POINTS = SIZE * SIZE + 4  # the grid and the path of 4 snapshots


class Interrupt(Exception):
    pass


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "loss-calls"
    directory.mkdir()
    monkeypatch.setenv(COUNT_DIR_ENV, str(directory))
    return directory


def same_surface(a: LossLandscape, b: LossLandscape) -> None:
    for got, want in ((a.z, b.z), (a.x, b.x), (a.y, b.y)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    assert a.path is not None and b.path is not None
    for got, want in zip(a.path, b.path, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


def interrupted_then_resumed(
    counted: Path, settings: dict[str, Any], stop: Any
) -> tuple[int, int, list[BlockDone]]:
    states = trained_states(4)
    with pytest.raises((Interrupt, BrokenProcessPool)):
        compute_landscape(states, counting, on_block=stop, **settings)
    first = points_evaluated(counted)
    events: list[BlockDone] = []
    resumed = compute_landscape(states, counting, on_block=events.append, **settings)
    second = points_evaluated(counted)
    reference = compute_landscape(
        states, counting, **{**settings, "cache_dir": None, "num_workers": None}
    )
    points_evaluated(counted)
    same_surface(resumed, reference)
    return first, second, events


def test_an_interrupted_run_resumes_without_redoing_work(counted: Path, tmp_path: Path) -> None:
    done: list[BlockDone] = []

    def interrupt_at_half(event: BlockDone) -> None:
        done.append(event)
        if len(done) == event.blocks // 2:
            raise Interrupt

    settings = {
        "landscape_size": SIZE,
        "cache_dir": tmp_path / "cache",
        "block_points": 2,
        "points_per_pass": 1,
        "onednn": False,  # no timed probes: every loss call is a point of the landscape
        "progress": False,
    }
    first, second, events = interrupted_then_resumed(counted, settings, interrupt_at_half)
    assert first == POINTS // 2  # half the points were done when the run stopped
    assert sum(e.cached for e in events) == len(done)  # all of them came back from disk
    assert first + second == POINTS  # nothing evaluated twice


@pytest.mark.slow
def test_a_killed_worker_costs_at_most_the_blocks_in_flight(counted: Path, tmp_path: Path) -> None:
    done: list[BlockDone] = []

    def kill_a_worker_at_half(event: BlockDone) -> None:
        done.append(event)
        if len(done) == event.blocks // 2:
            worker = multiprocessing.active_children()[0]
            os.kill(worker.pid, signal.SIGKILL)

    settings = {
        "landscape_size": SIZE,
        "cache_dir": tmp_path / "cache",
        "block_points": 1,
        "points_per_pass": 1,
        "onednn": False,  # no timed probes: every loss call is a point of the landscape
        "num_workers": 2,
        "progress": False,
    }
    first, second, events = interrupted_then_resumed(counted, settings, kill_a_worker_at_half)
    assert first >= POINTS // 2
    assert sum(e.cached for e in events) >= len(done)
    evaluated_twice = first + second - POINTS
    assert 0 <= evaluated_twice <= 0.1 * POINTS
