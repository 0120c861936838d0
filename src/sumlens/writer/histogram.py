"""Histograms binned as ``torch.utils.tensorboard.SummaryWriter.add_histogram`` bins them.

A user switching writers must see the same buckets in TensorBoard. The default edges
(``bins="tensorflow"``) are TensorFlow's: 0, and +-1e-12 growing by a factor of 1.1 up to
1e20. Any other ``bins`` is handed to ``numpy.histogram`` (a count, a numpy rule name, or
the edges). The counts are then merged ``max_bins`` at a time when there are more
buckets than that, and trimmed to the span of non-empty buckets, keeping one empty
bucket on the left, so that each ``bucket_limit`` is the right edge of its bucket.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sumlens._proto import tensorboard_pb2

TENSORFLOW_GROWTH = 1.1
TENSORFLOW_SMALLEST = 1e-12
TENSORFLOW_LARGEST = 1e20


def tensorflow_edges() -> np.ndarray:
    """The default bucket edges: negative mirror, 0, then 1e-12 x 1.1^k below 1e20."""
    positive = []
    edge = TENSORFLOW_SMALLEST
    while edge < TENSORFLOW_LARGEST:
        positive.append(edge)
        edge *= TENSORFLOW_GROWTH
    right = np.asarray(positive)
    return np.concatenate([-right[::-1], [0.0], right])


_TENSORFLOW_EDGES = tensorflow_edges()


def histogram_proto(
    values: np.ndarray, bins: Any = "tensorflow", max_bins: int | None = None
) -> tensorboard_pb2.HistogramProto:
    """The ``HistogramProto`` of ``values`` (any shape; flattened), binned by ``bins``.

    Raises ``ValueError`` for an empty array (nothing to bin) and for ``max_bins`` that
    is not a positive int.
    """
    flat = np.asarray(values).reshape(-1)
    if flat.size == 0:
        raise ValueError("add_histogram: values has no element; a histogram needs one at least")
    if max_bins is not None and (
        isinstance(max_bins, bool) or not isinstance(max_bins, int) or max_bins < 1
    ):
        raise ValueError(f"add_histogram: max_bins={max_bins!r} must be a positive int or None")
    edges = _TENSORFLOW_EDGES if isinstance(bins, str) and bins == "tensorflow" else bins
    counts, limits = np.histogram(flat, bins=edges)
    if max_bins is not None and counts.size > max_bins:
        counts, limits = _merged(counts, limits, counts.size // max_bins)
    counts, limits = _trimmed(counts, limits)
    as_float = flat.astype(np.float64)
    return tensorboard_pb2.HistogramProto(
        min=float(as_float.min()),
        max=float(as_float.max()),
        num=float(flat.size),
        sum=float(as_float.sum()),
        sum_squares=float(as_float.dot(as_float)),
        bucket_limit=limits.tolist(),
        bucket=counts.tolist(),
    )


def _merged(counts: np.ndarray, limits: np.ndarray, every: int) -> tuple[np.ndarray, np.ndarray]:
    """Buckets summed ``every`` at a time (the last group padded with empty buckets); the
    merged buckets keep every ``every``-th left edge and the last right edge."""
    short = -counts.size % every
    padded = np.concatenate([counts, np.zeros(short, dtype=counts.dtype)])
    merged = padded.reshape(-1, every).sum(axis=1)
    edges = np.empty(merged.size + 1, dtype=limits.dtype)
    edges[:-1] = limits[:-1:every]
    edges[-1] = limits[-1]
    return merged, edges


def _trimmed(counts: np.ndarray, limits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The buckets from the first to the last non-empty one, each paired with its right
    edge; the bucket before the first non-empty one (or an empty one at the start) leads."""
    filled = np.flatnonzero(counts > 0)
    if filled.size == 0:  # every value outside the edges
        raise ValueError(
            "add_histogram: no value falls inside the bins given; widen bins or check the values"
        )
    first, last = int(filled[0]), int(filled[-1])
    kept = counts[first - 1 : last + 1] if first > 0 else np.concatenate([[0], counts[: last + 1]])
    return kept, limits[first : last + 2]
