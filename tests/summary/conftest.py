"""Fixtures for the SummaryRecord tests: isolated records, fresh once-only warnings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import sumlens._log
from sumlens.summary import registry


@pytest.fixture(autouse=True)
def _isolated_records(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test starts with no open record and with warnings not yet issued.

    Records are process-wide (summary operators find them through the registry) and
    once-per-cause warnings are remembered for the life of the process, so without this
    one test could see another's record or miss the warning it checks for.
    """
    monkeypatch.setattr(sumlens._log, "_warned", set())
    registry.close_all(timeout=30)
    yield
    registry.close_all(timeout=30)
