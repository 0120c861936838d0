"""Checks on what ``add_value`` is given, made where the user called.

A value the writer thread could not encode would be lost there, and with it, for a tag
that cannot be encoded, every later step that carries the tag: so tags must be text that
UTF-8 can hold (no lone surrogates), and scalars, images and histograms must hold real
numbers. These checks read only a value's type and dtype, never its data.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from sumlens.summary.convert import torch_numpy_dtype

REAL_KINDS = "biuf"
"""numpy dtype kinds that scalars, images and histograms accept: bool, ints, floats."""


def check_name(name: str, plugin: str) -> None:
    """Raise ``ValueError`` when ``name`` cannot be written as a UTF-8 tag."""
    if name.isascii():
        return
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(
            f"name={name!r} for plugin {plugin!r} cannot be written: character "
            f"{name[err.start]!r} at position {err.start} is not valid Unicode text "
            "(tags are stored as UTF-8)"
        ) from None


def value_dtype(value: Any) -> np.dtype | None:
    """The numpy dtype ``value``'s snapshot will have, when it can be told without a copy.

    None for plain Python numbers and for array-likes that only a conversion reveals.
    """
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        if isinstance(value, complex):
            return np.dtype(np.complex128)
        return None
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        if dtype.is_floating_point:  # the common case, without building a tensor
            return np.dtype(np.float64 if dtype == torch.float64 else np.float32)
        try:
            return torch_numpy_dtype(value)
        except (TypeError, RuntimeError):  # quantized and other types numpy has no name for
            return np.dtype(object)
    try:
        return np.dtype(dtype)
    except TypeError:
        return None


def check_real_dtype(dtype: np.dtype | None, plugin: str, name: str) -> None:
    """Raise ``TypeError`` when ``plugin`` cannot hold values of ``dtype`` (None: unknown)."""
    if dtype is not None and dtype.kind not in REAL_KINDS:
        raise TypeError(
            f"{plugin} {name!r} has dtype {dtype}, which cannot be recorded; "
            f"a {plugin} needs real numbers (bool, int, uint or float dtypes)"
        )
