"""The usage-mode examples (seed 002: modes 1-4, hand-driven callbacks, distributed) run
end to end in a subprocess and write what they say they write."""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from itertools import pairwise
from pathlib import Path

import pytest

import sumlens
from sumlens.io import iter_events

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

COLLECTOR_AVAILABLE = hasattr(sumlens, "SummaryCollector")
needs_collector = pytest.mark.skipif(not COLLECTOR_AVAILABLE, reason="SummaryCollector not landed")


def run_example(name: str, *args: str, timeout: float = 120) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def read_run(logdir: Path) -> dict[tuple[str, str], list]:
    """``(plugin, tag) -> [events]`` of every event file in ``logdir``."""
    events: dict[tuple[str, str], list] = defaultdict(list)
    stream = iter_events(logdir)
    for event in stream:
        events[(event.plugin, event.tag)].append(event)
    return events


def steps(events: list) -> list[int]:
    return [event.step for event in events]


def plugins(run: dict[tuple[str, str], list]) -> set[str]:
    return {plugin for plugin, _ in run}


@needs_collector
def test_mode1_collector_in_train_and_eval(tmp_path: Path) -> None:
    out = run_example("mode1_collector.py", str(tmp_path))
    assert "wrote" in out and "loss/auto" in out
    run = read_run(tmp_path)
    # 2 epochs x 40 steps, collect_freq=5: the first step, then every 5th
    assert steps(run[("scalar", "loss/auto")]) == [1, *range(5, 81, 5)]
    assert steps(run[("scalar", "learning_rate/auto")]) == [1, *range(5, 81, 5)]
    assert run[("image", "input_data/auto")]
    histograms = {tag for plugin, tag in run if plugin == "histogram"}
    # no histogram_regular: the first five parameters
    assert histograms == {
        "conv1.weight/auto",
        "conv1.bias/auto",
        "conv2.weight/auto",
        "conv2.bias/auto",
        "fc.weight/auto",
    }
    assert {"graph", "train_lineage", "eval_lineage", "dataset_graph"} <= plugins(run)
    assert any(p.name.endswith("_MS") for p in tmp_path.iterdir())
    assert any(p.name.endswith("_lineage") for p in tmp_path.iterdir())


@needs_collector
def test_mode2_summary_operators_with_collector(tmp_path: Path) -> None:
    out = run_example("mode2_summary_ops.py", str(tmp_path))
    assert "conv1_mean_activation" in out
    run = read_run(tmp_path)
    # collect_freq=1: every one of the 40 training steps; eval adds nothing
    assert steps(run[("scalar", "conv1_mean_activation")]) == list(range(1, 41))
    assert steps(run[("histogram", "logits")]) == list(range(1, 41))
    assert steps(run[("image", "input_image")]) == list(range(1, 41))
    # collect_tensor_freq=20 over 40 steps: the first step, then 20, 40
    assert steps(run[("tensor", "conv1_output")]) == [1, 20, 40]
    assert run[("tensor", "conv1_output")][0].value.shape == (6, 6)
    assert steps(run[("scalar", "loss/auto")]) == list(range(1, 41))
    histograms = {tag for plugin, tag in run if plugin == "histogram"}
    assert {"conv1.weight/auto", "conv1.bias/auto", "conv2.weight/auto"} <= histograms
    assert not any(tag.startswith("fc.") for tag in histograms)  # histogram_regular


def test_mode3_custom_callback_records_loss_and_learning_rate(tmp_path: Path) -> None:
    out = run_example("mode3_custom_callback.py", str(tmp_path))
    assert "learning_rate" in out
    run = read_run(tmp_path)
    assert steps(run[("scalar", "loss")]) == list(range(1, 91))
    rates = [event.value for event in run[("scalar", "learning_rate")]]
    assert len(rates) == 90
    # LearningRateScheduler runs before the recorder in the list: step 1 sees one decay
    assert rates[0] == pytest.approx(0.1 * 0.98)
    assert all(later < earlier for earlier, later in pairwise(rates))
    assert steps(run[("image", "input_images")]) == [1, 31, 61]


def test_mode4_custom_loop_records_loss_learning_rate_and_graph(tmp_path: Path) -> None:
    out = run_example("mode4_custom_loop.py", str(tmp_path))
    assert "loss" in out
    run = read_run(tmp_path)
    assert steps(run[("scalar", "loss")]) == list(range(1, 151))
    rates = [event.value for event in run[("scalar", "learning_rate")]]
    assert rates[0] == pytest.approx(0.1)
    assert rates[-1] < 0.01  # cosine annealing down to ~0
    assert steps(run[("histogram", "0.weight/histogram")]) == list(range(25, 151, 25))
    assert "graph" in plugins(run)


@needs_collector
def test_hand_driven_callback_list_with_collector(tmp_path: Path) -> None:
    out = run_example("hand_driven_callbacks.py", str(tmp_path))
    assert "epoch: 2 step: 50" in out  # LossMonitor
    run = read_run(tmp_path)
    assert steps(run[("scalar", "loss/auto")]) == [1, *range(5, 101, 5)]
    assert "train_lineage" in plugins(run)


def _check_ranks(tmp_path: Path, loss_tag: str) -> None:
    for rank in (0, 1):
        rank_dir = tmp_path / f"rank_{rank}"
        files = [p for p in rank_dir.iterdir() if p.is_file()]
        assert files, f"nothing written to {rank_dir}"
        assert all(f".{rank}." in p.name for p in files)  # the rank is in the file names
        run = read_run(rank_dir)
        assert run[("scalar", loss_tag)], f"no {loss_tag} in {rank_dir}"


@pytest.mark.slow
def test_distributed_gloo_with_summary_record(tmp_path: Path) -> None:
    out = run_example("distributed_gloo.py", str(tmp_path), "--writer", "record", timeout=180)
    assert "writer: record" in out
    assert "rank 0:" in out and "rank 1:" in out
    _check_ranks(tmp_path, "loss")
    for rank in (0, 1):
        assert steps(read_run(tmp_path / f"rank_{rank}")[("scalar", "loss")]) == list(range(1, 81))
    # DDP keeps the ranks' weights identical
    checksums = {line.rsplit(" ", 1)[1] for line in out.splitlines() if "checksum" in line}
    assert len(checksums) == 1


@pytest.mark.slow
@needs_collector
def test_distributed_gloo_with_collector(tmp_path: Path) -> None:
    out = run_example("distributed_gloo.py", str(tmp_path), "--writer", "collector", timeout=180)
    assert "writer: collector" in out
    _check_ranks(tmp_path, "loss/auto")
