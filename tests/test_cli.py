"""The command line and the package metadata."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import sumlens
from sumlens import _log
from sumlens.cli import main


def test_version_matches_package() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "sumlens", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"sumlens {sumlens.__version__}"


def test_import_does_not_load_numba_or_torch() -> None:
    code = "import sys, sumlens, sumlens.io; print('numba' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_read_lists_values(golden_dir, capsys) -> None:
    assert main(["read", str(golden_dir / "all_plugins")]) == 0
    out = capsys.readouterr().out
    assert "scalar" in out and "loss" in out and "corrupt: 0" in out


def test_log_level_from_environment() -> None:
    code = "import logging, sumlens; print(logging.getLogger('sumlens').level)"
    env = {**os.environ, "SUMLENS_LOG_LEVEL": "debug"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert int(out.stdout) == logging.DEBUG


def test_warn_once_per_cause(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        assert _log.warn_once("test-cause-a", "first %s", 1)
        assert not _log.warn_once("test-cause-a", "again %s", 2)
        assert _log.warn_once("test-cause-b", "other")
    assert [r.getMessage() for r in caplog.records] == ["first 1", "other"]
