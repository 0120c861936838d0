"""Shared fixtures: where the golden MindSpore files live, and the scalar engines to test."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "data" / "golden"


def _fastscan_available() -> bool:
    return importlib.util.find_spec("sumlens.io._fastscan") is not None


SCALAR_ENGINES = [
    pytest.param("python", id="python"),
    pytest.param(
        "numba",
        id="numba",
        marks=pytest.mark.skipif(
            not _fastscan_available(),
            reason="sumlens.io._fastscan (the numba engine) does not exist yet",
        ),
    ),
]
"""``read_scalars`` engines every scalar test runs with (numba skipped until it exists)."""


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    """The golden MindSpore runs (all_plugins, collector, landscape) copied into the repo."""
    return GOLDEN_DIR


@pytest.fixture(params=SCALAR_ENGINES)
def scalar_engine(request: pytest.FixtureRequest) -> str:
    """Each ``read_scalars`` engine that exists."""
    return request.param


@pytest.fixture(scope="session")
def scalar_engines() -> list[str]:
    """Every ``read_scalars`` engine that exists, for tests that loop over them."""
    return ["python", "numba"] if _fastscan_available() else ["python"]
