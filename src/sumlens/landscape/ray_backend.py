"""Blocks of points as Ray tasks, for landscapes larger than one machine.

Each worker is a Ray actor that calls ``callback_fn()`` once (as a local worker process
does) and then runs block tasks; the plane is put into Ray's object store once per
landscape and read by every actor, which keeps it until the next plane arrives. Results
come back in completion order, exactly as from local workers, so caching, progress and
the final surface do not depend on where a block ran.

An already initialised Ray (``ray.init(...)`` by the caller) is used as it is; otherwise
``ray.init(address=ray_address)`` connects (``"auto"``, ``"ray://host:port"``, or
``"local"`` for a fresh local instance) and the backend shuts it down when done.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch

from sumlens.landscape.backend import Task
from sumlens.landscape.evaluate import EvalOptions, Evaluator
from sumlens.landscape.objective import objective_from
from sumlens.landscape.plane import Plane

TASKS_PER_ACTOR = 2
"""Tasks queued per actor: one running, one ready, so no actor waits for the driver."""

try:
    import ray

    HAVE_RAY = True
except ImportError:  # pragma: no cover - exercised only without the extra
    HAVE_RAY = False


class LandscapeActor:
    """One Ray worker: its own network and batches from ``callback_fn()``."""

    def __init__(
        self, callback_fn: Callable[[], Any], num_samples: int | None, options: EvalOptions
    ) -> None:
        torch.set_num_threads(1)
        device = torch.device("cuda") if ray.get_gpu_ids() else None
        self.evaluator = Evaluator(objective_from(callback_fn(), num_samples, device), options)

    def fingerprint(self) -> str:
        return self.evaluator.objective.fingerprint()

    def block(
        self, arrays: dict[str, np.ndarray], key: str, first: int, coords: np.ndarray
    ) -> np.ndarray:
        if self.evaluator.plane_key != key:
            self.evaluator.set_plane(Plane.from_arrays(arrays), key)
        return self.evaluator.losses(coords, first)


class RayBackend:
    """``num_workers`` actors (default: one per CPU, or per GPU when the cluster has GPUs)."""

    def __init__(
        self,
        callback_fn: Callable[[], Any],
        num_samples: int | None,
        options: EvalOptions,
        ray_address: str,
        num_workers: int | None,
    ) -> None:
        if not HAVE_RAY:
            raise ImportError("ray_address needs Ray: pip install 'sumlens[ray]'")
        if not isinstance(ray_address, str) or not ray_address.strip():
            raise ValueError(f"ray_address must be a non-empty str, got {ray_address!r}")
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            ray.init(address=ray_address)
        resources = ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        self.workers = num_workers or gpus or max(1, int(resources.get("CPU", 1)))
        actor = ray.remote(num_cpus=1, num_gpus=1 if gpus else 0)(LandscapeActor)
        # handles whose methods Ray makes at run time (``.remote``): no static type has them
        self._actors: list[Any] = [
            actor.remote(callback_fn, num_samples, options) for _ in range(self.workers)
        ]

    def fingerprint(self) -> str:
        return ray.get(self._actors[0].fingerprint.remote())

    def run(
        self, plane: Plane, key: str, tasks: Sequence[Task]
    ) -> Iterator[tuple[int, np.ndarray]]:
        arrays = ray.put(plane.to_arrays())
        waiting = list(tasks)
        running: dict[Any, tuple[int, Any]] = {}

        def submit(actor: Any) -> None:
            block, first, coords = waiting.pop(0)
            running[actor.block.remote(arrays, key, first, coords)] = (block, actor)

        for actor in self._actors:
            for _ in range(TASKS_PER_ACTOR):
                if waiting:
                    submit(actor)
        try:
            while running:
                (done,), _ = ray.wait(list(running), num_returns=1)
                block, actor = running.pop(done)
                if waiting:
                    submit(actor)
                yield block, ray.get(done)
        finally:
            for ref in running:
                ray.cancel(ref)

    def close(self) -> None:
        for actor in self._actors:
            ray.kill(actor)
        if self._owns_ray:
            ray.shutdown()
