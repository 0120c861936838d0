"""Counting the operators torch dispatches: what a device kernel launch costs, on the CPU."""

from __future__ import annotations

from collections.abc import Callable

from torch.utils._python_dispatch import TorchDispatchMode


class CountOps(TorchDispatchMode):
    """Counts the operators dispatched to a backend (views and allocations excluded)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        name = func._schema.name.split("::")[-1]
        if not func.is_view and name not in ("empty", "empty_strided", "lift_fresh"):
            self.ops.append(name)
        return func(*args, **(kwargs or {}))


def dispatched_ops(function: Callable[..., object], *args: object) -> list[str]:
    """The operators ``function(*args)`` dispatches: one kernel launch each on CUDA."""
    with CountOps() as counter:
        function(*args)
    return counter.ops
