"""Fixtures for the graph tests: fresh once-only warnings, no records left open."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import sumlens._log
from sumlens.summary import registry


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Once-per-cause warnings are remembered for the process; each test starts afresh."""
    monkeypatch.setattr(sumlens._log, "_warned", set())
    registry.close_all(timeout=30)
    yield
    registry.close_all(timeout=30)
