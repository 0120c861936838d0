"""Blocks of points evaluated by local worker processes.

The workers are spawned processes (never forked: a forked CUDA or OpenMP runtime is
unsafe), each calling ``callback_fn()`` once in its initializer, bound to one CUDA device
each when ``device_ids`` name devices, and given an equal share of the CPU threads
otherwise. The plane reaches them as a safetensors file, read once per plane. A worker
finds ``callback_fn`` by name: :mod:`sumlens.landscape.importable` refuses, in the
caller, a function the workers could not find; a worker that still can't find it
reports it as a TypeError, and a worker that dies is reported with its likely causes
(:func:`_broken_pool`).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import pickle
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import numpy as np
import torch

from sumlens.landscape.backend import Task
from sumlens.landscape.evaluate import EvalOptions, Evaluator
from sumlens.landscape.importable import not_importable, pickled_callback
from sumlens.landscape.objective import objective_from
from sumlens.landscape.plane import Plane

_WORKER: dict[str, Any] = {}


def _init_worker(
    payload: bytes,
    name: str,
    num_samples: int | None,
    options: EvalOptions,
    devices: Any,
    threads: int,
) -> None:
    """Build this worker's evaluator; a failure is kept and raised by its first task.

    ``callback_fn`` arrives pickled (``payload``) and is unpickled here rather than by
    the pool, so a function this process can't find is an error its first task reports,
    not a worker that dies while starting (a broken pool).
    """
    try:
        try:
            callback_fn = pickle.loads(payload)
        except Exception as err:
            raise not_importable(
                name, f"worker process {os.getpid()} could not find it ({err!r})"
            ) from None
        torch.set_num_threads(threads)
        device = None if devices is None else torch.device(devices.get())
        objective = objective_from(callback_fn(), num_samples, device)
        _WORKER["evaluator"] = Evaluator(objective, options)
    except BaseException as err:  # re-raised in the parent by the first task
        _WORKER["error"] = err


def _evaluator() -> Evaluator:
    if "error" in _WORKER:
        raise _WORKER["error"]
    return _WORKER["evaluator"]


def _worker_fingerprint() -> str:
    return _evaluator().objective.fingerprint()


def _worker_block(plane_path: str, key: str, first: int, coords: np.ndarray) -> np.ndarray:
    evaluator = _evaluator()
    if evaluator.plane_key != key:
        evaluator.set_plane(Plane.load(plane_path), key)
    return evaluator.losses(coords, first)


class ProcessBackend:
    """``len(devices)`` spawned worker processes (``devices``: CUDA names, or None for CPU)."""

    def __init__(
        self,
        callback_fn: Callable[[], Any],
        num_samples: int | None,
        options: EvalOptions,
        devices: Sequence[str | None],
    ) -> None:
        self.workers = len(devices)
        payload = pickled_callback(callback_fn, self.workers)
        name = getattr(callback_fn, "__qualname__", repr(callback_fn))
        context = multiprocessing.get_context("spawn")
        queue = None
        if any(d is not None for d in devices):
            queue = context.Queue()
            for device in devices:
                queue.put(device)
        threads = max(1, (os.cpu_count() or 1) // self.workers)
        self._planes = tempfile.mkdtemp(prefix="sumlens-landscape-")
        self._pool = concurrent.futures.ProcessPoolExecutor(
            self.workers,
            mp_context=context,
            initializer=_init_worker,
            initargs=(payload, name, num_samples, options, queue, threads),
        )

    def fingerprint(self) -> str:
        try:
            return self._pool.submit(_worker_fingerprint).result()
        except BrokenProcessPool as err:
            raise _broken_pool() from err

    def run(
        self, plane: Plane, key: str, tasks: Sequence[Task]
    ) -> Iterator[tuple[int, np.ndarray]]:
        path = os.path.join(self._planes, f"{key[:32]}.safetensors")
        if not os.path.exists(path):
            plane.save(path)
        futures = {
            self._pool.submit(_worker_block, path, key, first, coords): block
            for block, first, coords in tasks
        }
        try:
            for future in concurrent.futures.as_completed(futures):
                try:
                    heights = future.result()
                except BrokenProcessPool as err:
                    raise _broken_pool() from err
                yield futures[future], heights
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._planes, ignore_errors=True)


def _broken_pool() -> BrokenProcessPool:
    """The error for a worker process that died, with what usually kills one."""
    main = getattr(sys.modules.get("__main__"), "__file__", None) or "the main script"
    return BrokenProcessPool(
        "a landscape worker process ended abruptly (its own error, if any, is on stderr "
        "above). Likely causes: it was killed (out of memory?); or it failed while "
        f"re-running {main} as __mp_main__, which every spawned worker does before "
        "importing callback_fn: code that trains, exits or starts the landscape must be "
        'under `if __name__ == "__main__":`, and callback_fn must be defined at the top '
        "level, outside that block"
    )
