"""The quickstart (write a run in both formats and read it back) works end to end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
