"""Where blocks of points are evaluated: in this process, in worker processes, or on Ray.

Every backend answers the same two questions: a digest of the samples its workers score
(part of the cache key) and, for a plane and a list of blocks, each block's heights as
soon as it is done (in completion order, so the caller can save and report it).

* One worker runs in this process, on whatever ``callback_fn()`` returns: no
  ``if __name__ == "__main__"`` guard, no pickling.
* Several workers are spawned processes (never forked: a forked CUDA or OpenMP runtime
  is unsafe), each calling ``callback_fn()`` once in its initializer, bound to one CUDA
  device each when ``device_ids`` name devices, and given an equal share of the CPU
  threads otherwise. The plane reaches them as a safetensors file, read once per plane.
  A worker finds ``callback_fn`` by name: :mod:`sumlens.landscape.importable` refuses,
  in the caller, a function the workers could not find; a worker that still can't find
  it reports it as a TypeError, and a worker that dies is reported with its likely
  causes (:func:`_broken_pool`).
* ``ray_address`` hands the blocks to Ray actors (:mod:`sumlens.landscape.ray_backend`).
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
from typing import Any, Protocol

import numpy as np
import torch

from sumlens.landscape.evaluate import EvalOptions, Evaluator
from sumlens.landscape.importable import not_importable, pickled_callback
from sumlens.landscape.objective import objective_from
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


# ------------------------------------------------------------------ worker processes

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


# ------------------------------------------------------------------ choosing a backend


def check_device_ids(device_ids: object) -> list[int] | None:
    """``device_ids`` as a list of distinct ints >= 0 (below the CUDA device count on GPUs)."""
    if device_ids is None:
        return None
    if not isinstance(device_ids, list | tuple):
        raise TypeError(
            f"device_ids must be a list of ints or None, got {type(device_ids).__name__} "
            f"{device_ids!r}"
        )
    for value in device_ids:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(
                f"device_ids must hold ints, got {type(value).__name__} {value!r} in {device_ids!r}"
            )
        if value < 0:
            raise ValueError(f"device_ids must be >= 0, got {value} in {device_ids!r}")
    if len(set(device_ids)) != len(device_ids):
        raise ValueError(f"device_ids must not repeat an id, got {device_ids!r}")
    if torch.cuda.is_available():
        count = torch.cuda.device_count()
        beyond = [i for i in device_ids if i >= count]
        if beyond:
            raise ValueError(
                f"device_ids {beyond} do not exist: this machine has {count} CUDA device(s), "
                f"ids 0 to {count - 1}"
            )
    return list(device_ids)


def check_num_workers(num_workers: object, device_ids: list[int] | None) -> int | None:
    if num_workers is None:
        return None
    if isinstance(num_workers, bool) or not isinstance(num_workers, int):
        raise TypeError(f"num_workers must be an int or None, got {num_workers!r}")
    if num_workers < 1:
        raise ValueError(f"num_workers must be >= 1, got {num_workers}")
    if device_ids is not None:
        raise ValueError(
            f"give device_ids ({device_ids!r}) or num_workers ({num_workers}), not both: "
            "on CPU, n device ids already mean n worker processes"
        )
    return num_workers


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


def open_backend(
    source: Callable[[], Any] | Sequence[Any],
    num_samples: int | None,
    options: EvalOptions,
    *,
    device_ids: object = None,
    num_workers: object = None,
    ray_address: str | None = None,
) -> Backend:
    """The backend for these settings; ``source`` is ``callback_fn`` or its result.

    ``device_ids`` None or empty: one worker, in this process. n ids on a CUDA machine:
    one worker per device (``cuda:<id>``; a single id runs in this process on that
    device); n ids on CPU: n worker processes, as ``num_workers=n``.
    ``ray_address``: Ray actors (see :mod:`sumlens.landscape.ray_backend`).
    """
    ids = check_device_ids(device_ids)
    workers = check_num_workers(num_workers, ids)
    cuda = torch.cuda.is_available()
    if ray_address is not None:
        if ids:
            raise ValueError(
                f"device_ids ({ids!r}) cannot be combined with ray_address: Ray places the "
                "workers; use num_workers to say how many"
            )
        if not callable(source):
            raise TypeError(
                "ray_address needs callback_fn: a zero-argument function that builds "
                "(network, dataset, loss_fn) in each Ray worker"
            )
        from sumlens.landscape.ray_backend import RayBackend

        return RayBackend(source, num_samples, options, ray_address, workers)
    if workers is None:
        workers = max(1, len(ids or ()))
    devices: list[str | None] = [f"cuda:{i}" for i in ids] if cuda and ids else [None] * workers
    if workers == 1:
        result = source() if callable(source) else source
        return InProcessBackend(
            Evaluator(objective_from(result, num_samples, _one(devices)), options)
        )
    if not callable(source):
        raise TypeError(
            f"{workers} workers need callback_fn: a zero-argument, module-level function "
            "that builds (network, dataset, loss_fn) in each worker"
        )
    return ProcessBackend(source, num_samples, options, devices)


def _one(devices: list[str | None]) -> torch.device | None:
    return None if devices[0] is None else torch.device(devices[0])
