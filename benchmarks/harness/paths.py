"""Where the benchmarks keep things: the repository, the generated data and the results
(both git-ignored, made on first use)."""

from __future__ import annotations

from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parents[1]
"""``benchmarks/``."""
REPO_ROOT = BENCH_DIR.parent
"""The repository: the working directory of workers run as ``python -m benchmarks...``."""
DATA_DIR = BENCH_DIR / "data"
"""Generated data sets, reused while their manifest matches (``benchmarks.datasets``)."""
RESULTS_DIR = BENCH_DIR / "results"
"""Raw timings and reports of every run."""
