"""Landscape tests: one torch thread (the results are compared to 1e-6), local-only Ray."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import torch

# Ray's servers bind to 127.0.0.1 only when it treats this machine as a single-node
# "cluster" (the switch it uses on macOS/Windows); set before anything imports ray.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


@pytest.fixture(scope="module", autouse=True)
def one_thread() -> Iterator[None]:
    """One torch thread for each module, its module-scoped fixtures included."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
