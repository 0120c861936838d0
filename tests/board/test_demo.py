"""``make demo``: trains two runs, serves them, and stops by itself under ``DEMO_EXIT_AFTER``.

Runs the Makefile's real ``demo`` recipe in a clean copy (the Makefile and ``examples/``
in a temporary directory, so ``demo_runs`` starts empty and the checkout is not written),
with this interpreter as ``PY`` and the venv stamp taken as up to date (``make -o``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.board import free_port, get_json, wait_until

from sumlens.io import read_scalars

ROOT = Path(__file__).resolve().parents[2]
EXIT_AFTER = 20
"""Seconds the demo serves: the window in which the test asks it for the runs."""


def _ready_runs(api: str) -> dict[str, dict[str, Any]] | None:
    """The demo's runs once both are loaded with their loss curves, else None."""
    answer = get_json(f"{api}/runs")
    if answer is None:
        return None
    runs = {run["id"]: run for run in answer["runs"]}
    ready = all(
        run["status"] == "ready" and "loss/auto" in run["tags"].get("scalar", [])
        for run in runs.values()
    )
    return runs if ready and set(runs) == {"./lr_0.01", "./lr_0.1"} else None


NPM_STAMP = "src/sumlens/board/static/vendor/.installed"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_trains_two_runs_and_serves_them(tmp_path: Path) -> None:
    copy = tmp_path / "sumlens"
    copy.mkdir()
    shutil.copy(ROOT / "Makefile", copy)
    shutil.copytree(ROOT / "examples", copy / "examples")
    (tmp_path / "home").mkdir()
    port = free_port()
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "DEMO_PORT": str(port),
        "DEMO_EXIT_AFTER": str(EXIT_AFTER),
    }
    output = tmp_path / "output.txt"
    with output.open("w") as out:
        demo = subprocess.Popen(
            # the venv and the JS this checkout installed: the copy has neither to install
            ["make", "-o", ".venv/.installed", "-o", NPM_STAMP, "demo", f"PY={sys.executable}"],
            cwd=copy,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # make and the demo are one group: cleanup ends both
        )
    api = f"http://127.0.0.1:{port}/api/v1"
    try:
        wait_until(lambda: get_json(f"{api}/health") or demo.poll() is not None, timeout=300)
        health = get_json(f"{api}/health")
        assert health is not None, output.read_text()
        assert health["base_dir"] == str(copy / "demo_runs")
        runs = wait_until(lambda: _ready_runs(api) or demo.poll() is not None, timeout=EXIT_AFTER)
        assert isinstance(runs, dict), output.read_text()
        assert all(
            run["points"] > 0 and run["damage"]["corrupt_records"] == 0 for run in runs.values()
        )
        assert demo.wait(timeout=EXIT_AFTER + 60) == 0, output.read_text()
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
    printed = output.read_text()
    assert f"sumlens dashboard: http://127.0.0.1:{port}/" in printed
    assert "lr=0.01: test accuracy" in printed and "lr=0.1: test accuracy" in printed
    for lr in ("0.01", "0.1"):
        steps, _, loss = read_scalars(copy / "demo_runs" / f"lr_{lr}")["loss/auto"]
        assert len(steps) > 10 and loss[-1] < loss[0]
