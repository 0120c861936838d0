"""Checks for CUDA code: that recording makes the host wait for the device nowhere."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch


@contextmanager
def no_synchronisation(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Fail on any operation that makes the host wait for the device, and count explicit
    ``synchronize`` calls (torch's sync debug mode flags implicit ones: ``.item()``,
    copies to pageable memory ...)."""
    calls: list[str] = []
    real_sync = torch.cuda.synchronize

    def counting_sync(*args: object, **kwargs: object) -> None:
        calls.append("torch.cuda.synchronize")
        real_sync(*args, **kwargs)

    monkeypatch.setattr(torch.cuda, "synchronize", counting_sync)
    torch.cuda.set_sync_debug_mode("error")
    try:
        yield calls
    finally:
        torch.cuda.set_sync_debug_mode("default")
        monkeypatch.setattr(torch.cuda, "synchronize", real_sync)
