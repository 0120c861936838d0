"""Shared fixtures: where the golden MindSpore files live, the scalar engines to test, the
session's Chromium, the state's databases."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from helpers.chromium import launched_chromium
from playwright.sync_api import Browser

if TYPE_CHECKING:
    from helpers.postgres import Cluster

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
def browser() -> Iterator[Browser]:
    """The session's headless Chromium (``helpers/chromium.py``: one per session)."""
    with launched_chromium() as chromium:
        yield chromium


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


STATE_BACKENDS = ["sqlite", "postgresql"]
"""The shared state's databases every state test runs with (``tests/helpers/postgres.py``
starts a throwaway PostgreSQL cluster for the second)."""


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """A throwaway PostgreSQL cluster on 127.0.0.1 for the test session (started at the
    first test that asks; fails naming ``apt-get install postgresql`` when missing)."""
    from helpers.postgres import postgres_cluster as started

    with started() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def postgres_url(postgres_cluster: Cluster) -> str:
    """The ``postgresql://`` URL of a fresh database, one for the session."""
    return postgres_cluster.database()


@pytest.fixture
def postgres_database(postgres_cluster: Cluster) -> str:
    """The ``postgresql://`` URL of a fresh database, one per test."""
    return postgres_cluster.database()


@pytest.fixture(params=STATE_BACKENDS)
def state_backend(request: pytest.FixtureRequest) -> str:
    """Each database the shared state runs on."""
    return request.param


@pytest.fixture
def new_state_url(state_backend: str, request: pytest.FixtureRequest) -> Callable[[], str | None]:
    """Gives the ``state`` setting of a fresh state on ``state_backend`` at each call: None
    (SQLite, fresh in a fresh workspace) or a new PostgreSQL database's URL."""
    if state_backend == "sqlite":
        return lambda: None
    cluster: Cluster = request.getfixturevalue("postgres_cluster")
    return cluster.database


@pytest.fixture
def state_url(new_state_url: Callable[[], str | None]) -> str | None:
    """The ``state`` setting of a fresh state on ``state_backend`` (SQLite: None)."""
    return new_state_url()
