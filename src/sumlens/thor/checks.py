"""Argument checks of ``thor`` that :mod:`sumlens._checks` does not cover: each error names
the argument, the value and what is allowed, and is raised when the optimizer is built.

``momentum`` must be a Python float (an int is refused, as MindSpore does);
``split_indices`` are layer indices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["check_float", "check_split_indices"]


def check_float(value: object, name: str, owner: str) -> float:
    """A Python float (an int is rejected, as MindSpore does) that is finite and >= 0."""
    if not isinstance(value, float):
        raise TypeError(
            f"For '{owner}', the argument '{name}' must be a float, "
            f"but got {type(value).__name__} {value!r}"
        )
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(
            f"For '{owner}', the argument '{name}' must be finite and >= 0.0, but got {value!r}"
        )
    return value


def check_split_indices(value: object, layers: int, owner: str) -> list[int]:
    """Strictly increasing layer indices in ``[0, layers - 1]``; None means one group."""
    if value is None:
        return [max(layers - 1, 0)]
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise TypeError(
            f"For '{owner}', the argument 'split_indices' must be None or a list of ints, "
            f"but got {type(value).__name__} {value!r}"
        )
    indices = list(value)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in indices):
        raise TypeError(
            f"For '{owner}', the argument 'split_indices' must contain only ints, "
            f"but got {indices!r}"
        )
    if (
        not indices
        or any(not 0 <= i < max(layers, 1) for i in indices)
        or indices != sorted(set(indices))
    ):
        raise ValueError(
            f"For '{owner}', the argument 'split_indices' must be a non-empty, strictly "
            f"increasing list of layer indices in [0, {max(layers - 1, 0)}] ({layers} "
            f"second-order layers), but got {indices!r}"
        )
    return indices
