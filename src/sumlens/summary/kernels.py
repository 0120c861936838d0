"""The writer's compiled kernels, made ready in the background so no step waits for them.

On a fresh install, compiling the histogram and serialization kernels takes seconds; the
first step that recorded a histogram used to spend them on the training thread. Now
:data:`WRITER_KERNELS` (a :class:`sumlens._numba.KernelSet`) gets them ready off the
training thread (:func:`sumlens.summary.kernel_warmup.warm` calls each once), started by
every ``SummaryRecord``; until :func:`ready`, histograms are binned by numpy
(:func:`sumlens.summary.histogram.reference_histogram`, the writer thread does it) and
scalar blocks and histogram messages are serialized by protobuf. Both paths
give the same bytes (the tests compare them); only the speed differs.
"""

from __future__ import annotations

import numpy as np

from sumlens._numba import KernelSet

WRITER_KERNELS = KernelSet(
    "writer",
    "sumlens.summary.kernel_warmup:warm",
    (
        "sumlens.summary._histogram_jit",
        "sumlens.summary._histogram_wire",
        "sumlens.summary._scalar_jit",
        "sumlens.summary.histogram",
        "sumlens.summary.scalar_block",
        "sumlens.summary.kernels",
        "sumlens.summary.kernel_warmup",
    ),
)
HISTOGRAM_DTYPES = frozenset(
    np.dtype(code) for code in ("float32", "float64", "int64", "int32", "uint8")
)
"""Dtypes whose compiled histogram is made ready (bools are binned as uint8); the rarer
ones are always binned by numpy, which costs them no compile at all."""
_BINNED_AS = {np.dtype(np.bool_): np.dtype(np.uint8)}


def ready() -> bool:
    """Whether the writer's kernels are ready (starts getting them ready if not)."""
    return WRITER_KERNELS.ready()


def histogram_ready(dtype: np.dtype) -> bool:
    """Whether an array of ``dtype`` can be binned now by the compiled histogram."""
    dtype = _BINNED_AS.get(dtype, dtype)
    return dtype in HISTOGRAM_DTYPES and WRITER_KERNELS.ready()
