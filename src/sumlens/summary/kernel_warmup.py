"""The writer kernels' warm-up: every kernel called once, the way real calls take them.

:data:`sumlens.summary.kernels.WRITER_KERNELS` names :func:`warm` as its warm-up; it runs
off the training thread (or in a compiling child), never on import. It sits above the
modules whose kernels it calls, so that :mod:`sumlens.summary.kernels`, which only says
whether they are ready, stays below them.
"""

from __future__ import annotations

import numpy as np

from sumlens.summary._histogram_wire import mindspore_histogram_bytes
from sumlens.summary.histogram import compiled_histogram
from sumlens.summary.kernels import HISTOGRAM_DTYPES
from sumlens.summary.scalar_block import ScalarBlock, TagTable, encode_scalar_block


def warm() -> None:
    """Call every writer kernel once, through the code real calls take, for each type used."""
    values = np.linspace(-1.0, 1.0, 1000)
    for dtype in sorted(HISTOGRAM_DTYPES, key=str):
        if dtype.kind == "f":
            mixed = np.concatenate([values, [np.nan, np.inf, -np.inf]]).astype(dtype)
            compiled_histogram(mixed)  # with NaN and infinities: the slow statistics pass
            compiled_histogram(np.full(3, np.nan, dtype))
            hist = compiled_histogram(values.astype(dtype))
        else:
            hist = compiled_histogram((values * 100).astype(dtype))
        mindspore_histogram_bytes(hist)
    for file_format in ("mindspore", "tensorboard"):
        encode_scalar_block(ScalarBlock([(1, 0.0, {"warm": 1.0})]), TagTable(), file_format)
