"""Where blocks of points are evaluated: in this process, in worker processes, or on Ray.

* One worker runs in this process, on whatever ``callback_fn()`` returns: no
  ``if __name__ == "__main__"`` guard, no pickling
  (:class:`~sumlens.landscape.backend.InProcessBackend`).
* Several workers are spawned processes, one per CUDA device when ``device_ids`` name
  devices (:mod:`sumlens.landscape.workers`).
* ``ray_address`` hands the blocks to Ray actors (:mod:`sumlens.landscape.ray_backend`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from sumlens.landscape.backend import Backend, InProcessBackend
from sumlens.landscape.evaluate import EvalOptions, Evaluator
from sumlens.landscape.objective import objective_from
from sumlens.landscape.workers import ProcessBackend


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


def check_num_workers(num_workers: int | None, device_ids: list[int] | None) -> int | None:
    """``num_workers`` (an int >= 1 or None, checked with the other run options), unless
    ``device_ids`` already say how many workers there are."""
    if num_workers is not None and device_ids is not None:
        raise ValueError(
            f"give device_ids ({device_ids!r}) or num_workers ({num_workers}), not both: "
            "on CPU, n device ids already mean n worker processes"
        )
    return num_workers


def open_backend(
    source: Callable[[], Any] | Sequence[Any],
    num_samples: int | None,
    options: EvalOptions,
    *,
    device_ids: object = None,
    num_workers: int | None = None,
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
        # Imported here: Ray is an optional extra, and importing it costs a third of a
        # second; only a landscape on Ray needs it.
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
