"""The interface every landscape backend implements, and the one in this process.

A backend answers two questions: a digest of the samples its workers score (part of the
cache key) and, for a plane and a list of blocks, each block's heights as soon as it is
done (in completion order, so the caller can save and report it). Where the blocks run
(this process, worker processes, Ray) is chosen by :mod:`sumlens.landscape.placement`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np

from sumlens.landscape.evaluate import Evaluator
from sumlens.landscape.plane import Plane

Task = tuple[int, int, np.ndarray]
"""(block index, index of its first point, its P x 2 coordinates)."""


class Backend(Protocol):
    """Evaluates blocks of one plane; see the module docstring."""

    def fingerprint(self) -> str: ...

    def run(
        self, plane: Plane, key: str, tasks: Sequence[Task]
    ) -> Iterator[tuple[int, np.ndarray]]: ...

    def close(self) -> None: ...


class InProcessBackend:
    """One evaluator in this process."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.evaluator = evaluator

    def fingerprint(self) -> str:
        return self.evaluator.objective.fingerprint()

    def run(
        self, plane: Plane, key: str, tasks: Sequence[Task]
    ) -> Iterator[tuple[int, np.ndarray]]:
        self.evaluator.set_plane(plane, key)
        for block, first, coords in tasks:
            yield block, self.evaluator.losses(coords, first)

    def close(self) -> None:
        self.evaluator.close()
