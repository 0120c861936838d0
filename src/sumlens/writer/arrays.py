"""Whatever a ``SummaryWriter`` method is handed (a numpy array, a Python list, a torch tensor
on any device, a JAX array ...) as a host numpy array, for the payload builders beside this
module; errors name the method and the argument the user passed."""

from __future__ import annotations

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
