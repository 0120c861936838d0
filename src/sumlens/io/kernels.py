"""The reader's compiled kernels, made ready in the background for long-lived readers.

A fresh process loads the numba engine's kernels from the cache in about a second and
compiles them in about 20 s when the cache is empty. A server must answer before either:
:data:`READER_KERNELS` gets them ready off the serving threads, and readers use the
python engine (same results) until :func:`sumlens.io.scalars.fast_engine_ready` says so.
"""

from __future__ import annotations

from sumlens._numba import KernelSet

READER_KERNELS = KernelSet("reader", "sumlens.io._fastscan:warm_up", ("sumlens.io._fastscan",))
