"""A record's writer thread must not lose steps to a graph capture running beside it.

A ``torch.export`` capture (non-strict) replaces ``math.pow`` while it runs. A writer
thread that loaded its first compiled kernel during that window used to fail, and the
steps it was writing were lost (the third way of recording that MindSpore documents: a
callback with its own ``SummaryRecord`` beside a ``SummaryCollector`` that captures the
graph). The first test
forces the interleaving; the second runs the real scenario in fresh processes with an
empty kernel cache while other processes load the CPU.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.summary import read_events, run_child

from sumlens.io import read_scalars

CAPTURE_BESIDE_WRITER = """
import logging, math, sys
from sumlens import SummaryRecord

errors = []
class Errors(logging.Handler):
    def emit(self, record):
        errors.append(record.getMessage())
logging.getLogger("sumlens").addHandler(Errors(logging.ERROR))

rec = SummaryRecord(sys.argv[1])
real_pow = math.pow
math.pow = lambda x, y: x**y  # what torch.export's non-strict capture does while it runs
try:
    for step in range(1, 4):  # the writer loads its kernels now, inside the "capture"
        rec.add_value("scalar", "loss", float(step))
        rec.record(step)
    rec.flush()
finally:
    math.pow = real_pow
rec.close()
print(errors)
"""


def test_writer_loading_its_kernels_during_a_capture_loses_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = run_child(CAPTURE_BESIDE_WRITER, str(run), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", "no write error was logged"
    assert [(e.step, e.value) for e in read_events(run)] == [(1, 1.0), (2, 2.0), (3, 3.0)]


MODE3_BESIDE_COLLECTOR = """
import sys
import torch
from torch import nn
from sumlens import Callback, Model, SummaryCollector, SummaryRecord

class RecordLoss(Callback):  # a callback with a SummaryRecord of its own
    def __init__(self, summary_dir):
        self.summary_dir = summary_dir
    def on_train_begin(self, run_context):
        self.record = SummaryRecord(self.summary_dir)
    def on_train_step_end(self, run_context):
        params = run_context.original_args()
        self.record.add_value("scalar", "loss", params.net_outputs)
        self.record.record(params.cur_step_num)
    def on_train_end(self, run_context):
        self.record.close()

torch.manual_seed(0)
net = nn.Sequential(nn.Flatten(), nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 4))
batches = [(torch.rand(8, 1, 8, 8), torch.randint(0, 4, (8,))) for _ in range(3)]
model = Model(net, nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), 0.1))
collector = SummaryCollector(  # the loss and the graph: its capture is what races
    sys.argv[2],
    collect_freq=1,
    collect_specified_data={"collect_metric": True, "collect_graph": True},
    keep_default_action=False,
)
model.train(1, batches, callbacks=[RecordLoss(sys.argv[1]), collector])
"""
RUNS = 2


@pytest.fixture
def busy_cpus() -> Iterator[None]:
    """Two processes spinning beside the test, as on a loaded machine."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait(30)


@pytest.mark.slow
def test_mode3_callback_beside_the_collector_keeps_every_step(
    tmp_path: Path, busy_cpus: None
) -> None:
    for run in range(RUNS):
        mine, collected = tmp_path / f"mine{run}", tmp_path / f"collector{run}"
        cold_cache = {"NUMBA_CACHE_DIR": str(tmp_path / f"kernels{run}")}
        done = run_child(
            MODE3_BESIDE_COLLECTOR, str(mine), str(collected), cwd=tmp_path, env=cold_cache
        )
        assert done.returncode == 0, done.stderr
        assert "could not" not in done.stderr, done.stderr
        assert read_scalars(mine)["loss"][0].tolist() == [1, 2, 3], f"run {run}"
        assert read_scalars(collected)["loss/auto"][0].tolist() == [1, 2, 3], f"run {run}"
