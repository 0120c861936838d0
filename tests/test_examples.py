"""The examples run end to end: the quickstart (write a run in both formats and read it
back) and one script per way of logging (torch's SummaryWriter API, Lightning, Hugging
Face, Keras)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_quickstart_writes_and_reads_both_formats(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert out.count("damage: False") == 2
    assert "'scalar': 200" in out and "'histogram': 20" in out and "'image': 20" in out
    assert any(p.name.endswith("_MS") for p in (tmp_path / "mindspore_run").iterdir())
    assert any("tfevents" in p.name for p in (tmp_path / "tensorboard_run").iterdir())


@pytest.mark.parametrize(
    ("script", "needs", "expected"),
    [
        ("summary_writer_example.py", "torch", "scalar               loss"),
        ("lightning_example.py", "lightning", "hp_metric"),
        ("transformers_example.py", "transformers", "train/loss"),
        ("keras_example.py", "keras", "epoch_loss"),
    ],
)
def test_each_way_of_logging_runs(tmp_path: Path, script: str, needs: str, expected: str) -> None:
    if importlib.util.find_spec(needs) is None:  # not imported here: keras needs its backend set
        pytest.skip(f"{needs} is not installed")
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "KERAS_BACKEND": "torch"},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert expected in out.stdout
    assert any(tmp_path.rglob("*tfevents*"))
