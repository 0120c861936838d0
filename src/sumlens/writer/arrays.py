"""Whatever a ``SummaryWriter`` method is handed (a numpy array, a Python list, a torch tensor
on any device, a JAX array ...) as a host numpy array, for the payload builders beside this
module; errors name the method and the argument the user passed."""

from __future__ import annotations

import threading

import numpy as np

from sumlens.summary.convert import PendingArray, host_view, resolve, snapshot


def host_array(value: object, name: str, owner: str) -> np.ndarray:
    """``value`` as a numpy array: without a copy for numpy arrays and CPU tensors (never
    written to), a finished host copy for device tensors."""
    if isinstance(value, list | tuple):
        try:
            return np.asarray(value)
        except ValueError as err:  # ragged nesting
            raise ValueError(
                f"For '{owner}', the argument '{name}' must be a rectangular nest of numbers, "
                f"but got {value!r:.200}"
            ) from err
    view = host_view(value)
    if view is not None:
        return view
    try:
        return resolve(snapshot(value, name))
    except TypeError as err:
        raise TypeError(
            f"For '{owner}', the argument '{name}' must be a numpy array, a list or a tensor, "
            f"but got {type(value).__name__}"
        ) from err


def numeric_array(value: object, name: str, owner: str) -> np.ndarray:
    """:func:`host_array` of real numbers (bool, int or float), finite."""
    array = host_array(value, name, owner)
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"For '{owner}', the argument '{name}' must hold real numbers, "
            f"but got dtype {array.dtype}"
        )
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise ValueError(
            f"For '{owner}', the argument '{name}' must be finite, "
            f"but it holds {np.count_nonzero(~np.isfinite(array))} NaN or infinite values"
        )
    return array


def snapshot_array(value: object, name: str, owner: str) -> np.ndarray | PendingArray:
    """A private copy of ``value``'s real numbers for the writer thread to use later: a
    host copy, or for a CUDA tensor a pending one (nothing waits for the device now)."""
    if isinstance(value, list | tuple):
        copy: np.ndarray | PendingArray = host_array(value, name, owner)
    else:
        try:
            copy = snapshot(value, name)
        except TypeError as err:
            raise TypeError(
                f"For '{owner}', the argument '{name}' must be a numpy array, a list or a "
                f"tensor, but got {type(value).__name__}"
            ) from err
    if np.dtype(copy.dtype).kind not in "biuf":
        raise TypeError(
            f"For '{owner}', the argument '{name}' must hold real numbers, but got dtype "
            f"{copy.dtype}"
        )
    return copy


class CopyBuffers:
    """Host buffers reused for copies of the same shape and type: a new multi-megabyte
    array per call costs its page faults again each time (about 2 ms for 4 MB), more than
    the copy. :meth:`take` copies a value into a free buffer (or a new one); the writer
    thread :meth:`give`s it back once done with it; at most ``keep`` wait per kind."""

    def __init__(self, keep: int = 4) -> None:
        self.keep = keep
        self._free: dict[tuple[tuple[int, ...], np.dtype], list[np.ndarray]] = {}
        self._lock = threading.Lock()

    def take(self, value: object, name: str, owner: str) -> tuple[np.ndarray | PendingArray, bool]:
        """A private copy of ``value`` (see :func:`snapshot_array`), and whether it is one
        of these buffers (to :meth:`give` back)."""
        view = None if isinstance(value, list | tuple) else host_view(value)
        if view is None or view.dtype.kind not in "biuf":
            return snapshot_array(value, name, owner), False
        key = (view.shape, view.dtype)
        with self._lock:
            free = self._free.get(key)
            buffer = free.pop() if free else None
        if buffer is None:
            buffer = np.empty(view.shape, view.dtype)
        np.copyto(buffer, view)
        return buffer, True

    def give(self, buffer: np.ndarray) -> None:
        """Take back a buffer of :meth:`take` (kept when fewer than ``keep`` wait)."""
        with self._lock:
            free = self._free.setdefault((buffer.shape, buffer.dtype), [])
            if len(free) < self.keep:
                free.append(buffer)
