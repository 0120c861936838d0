"""The compiled binning of TensorFlow's default edges gives numpy's buckets (the plain path,
and torch's writer's) for any values: around every edge, NaN and infinities, integers."""

from __future__ import annotations

import os
import select
import signal
import threading
import weakref

import numpy as np
import pytest

from sumlens._proto import tensorboard_pb2
from sumlens.writer.histogram import (
    HISTOGRAM_KERNELS,
    SPLIT_FROM,
    cell_table,
    helper_thread,
    histogram_proto,
    tensorflow_edges,
)

EDGES = tensorflow_edges()
RNG = np.random.default_rng(11)


@pytest.fixture(scope="module")
def kernel():  # type: ignore[no-untyped-def]
    assert HISTOGRAM_KERNELS.wait(timeout=600), "the histogram kernels did not get ready"
    from sumlens.writer import _histogram_jit as jit

    def binned(values: np.ndarray):  # type: ignore[no-untyped-def]
        if values.dtype == np.float32:
            return jit.float32_histogram(values, cell_table(32), EDGES)
        return jit.float64_histogram(values, cell_table(64), EDGES)

    return binned


AROUND_EDGES = np.concatenate(
    [
        EDGES,
        np.nextafter(EDGES, np.inf),
        np.nextafter(EDGES, -np.inf),
        [0.0, -0.0, 5e-324, -5e-324, 1e-300, -1e-300, 1e30, -1e30],
    ]
)
CASES = {
    "around every edge": AROUND_EDGES,
    "around every edge, float32": AROUND_EDGES.astype(np.float32),
    "extremes, float32": np.array(
        [0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-45, -1e-45], np.float32
    ),
    "normal float32": RNG.normal(size=100_000).astype(np.float32),
    "cauchy float32, huge": (RNG.standard_cauchy(20_000) * 1e25).astype(np.float32),
    "cauchy, tiny": RNG.standard_cauchy(20_000) * 1e-14,
    "cauchy, huge": RNG.standard_cauchy(20_000) * 1e17,
    "integers": RNG.integers(-(10**6), 10**6, size=20_000),
    "uint8": RNG.integers(0, 256, size=5_000).astype(np.uint8),
    "with NaN and infinities": np.array([1.0, np.nan, np.inf, -np.inf, -2.0]),
    "a NaN with its sign bit set": np.array([1.0, -np.nan, -2.0]),
    "a NaN with its sign bit set, float32": np.array([1.0, -np.nan, -2.0], np.float32),
    "signed zeros": np.array([-0.0, 0.0, -0.0]),
    "one value": np.array([3.5]),
}


@pytest.mark.parametrize("values", CASES.values(), ids=CASES.keys())
def test_counts_sums_and_extremes_are_numpys(kernel, values: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    counts, total, squares, low, high = kernel(values)
    as_float = values.astype(np.float64)
    np.testing.assert_array_equal(counts, np.histogram(as_float, bins=EDGES)[0])
    np.testing.assert_array_equal([low, high], [values.min(), values.max()])
    with np.errstate(invalid="ignore", over="ignore"):  # sums in another order: rounding
        expected = as_float.sum(), as_float.dot(as_float)
        scale = np.abs(as_float).sum()  # error grows with the magnitudes cancelled
    np.testing.assert_allclose(total, expected[0], rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(squares, expected[1], rtol=1e-12)


@pytest.mark.parametrize(
    "values", [CASES["with NaN and infinities"], np.array([np.inf, -np.inf, 1.0])]
)
def test_statistics_of_nan_and_infinities_are_numpys(values: np.ndarray) -> None:
    assert HISTOGRAM_KERNELS.wait(timeout=600)
    proto = histogram_proto(values)
    with np.errstate(invalid="ignore"):
        expected = values.min(), values.max(), values.sum(), values.dot(values)
    np.testing.assert_array_equal([proto.min, proto.max, proto.sum, proto.sum_squares], expected)


@pytest.mark.parametrize("max_bins", [None, 7])
def test_both_paths_write_the_same_histogram(kernel, max_bins: int | None) -> None:  # type: ignore[no-untyped-def]
    values = RNG.normal(size=10_000)
    compiled = histogram_proto(values, "tensorflow", max_bins)
    plain = histogram_proto(values, EDGES, max_bins)  # explicit edges: numpy's path
    assert list(compiled.bucket) == list(plain.bucket)
    assert list(compiled.bucket_limit) == list(plain.bucket_limit)
    assert (compiled.min, compiled.max, compiled.num) == (plain.min, plain.max, plain.num)
    assert compiled.sum == pytest.approx(plain.sum) and compiled.sum_squares == pytest.approx(
        plain.sum_squares
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_a_large_array_binned_in_halves_gives_numpys_histogram(kernel, dtype) -> None:  # type: ignore[no-untyped-def]
    """Arrays from SPLIT_FROM values are binned in two halves at once; edge values, NaN and
    infinities in both halves, and an odd size, land as numpy bins them."""
    values = (RNG.standard_cauchy(SPLIT_FROM + 1001) * 50).astype(dtype)
    if values.dtype.kind == "f":
        values[:: SPLIT_FROM // 3] = np.nan
        values[7 :: SPLIT_FROM // 2] = np.inf
        values[-AROUND_EDGES.size :] = AROUND_EDGES.astype(dtype)
    compiled = histogram_proto(values, "tensorflow")
    plain = histogram_proto(values, EDGES)
    assert list(compiled.bucket) == list(plain.bucket)
    assert list(compiled.bucket_limit) == list(plain.bucket_limit)
    np.testing.assert_array_equal(
        [compiled.min, compiled.max, compiled.num], [plain.min, plain.max, plain.num]
    )


@pytest.mark.parametrize(
    "values", [RNG.normal(size=5_000), np.array([-0.0, 0.0]), np.array([1.0, np.nan, 2.0])]
)
def test_the_message_from_wire_bytes_equals_one_filled_field_by_field(values: np.ndarray) -> None:
    """histogram_proto writes the message's wire bytes itself (fast); the message reads and
    serializes as the one protobuf fills from the same numbers."""
    proto = histogram_proto(values, EDGES)
    filled = tensorboard_pb2.HistogramProto(
        min=proto.min,
        max=proto.max,
        num=float(values.size),
        sum=proto.sum,
        sum_squares=proto.sum_squares,
        bucket_limit=list(proto.bucket_limit),
        bucket=list(proto.bucket),
    )
    assert proto.SerializeToString() == filled.SerializeToString()
    counts, limits = np.histogram(values[~np.isnan(values)], bins=EDGES)
    first, last = np.flatnonzero(counts)[[0, -1]]
    assert list(proto.bucket) == counts[first - 1 : last + 1].tolist()
    assert list(proto.bucket_limit) == limits[first : last + 2].tolist()
    np.testing.assert_array_equal([proto.min, proto.max], [values.min(), values.max()])


def test_a_helper_busy_elsewhere_hands_its_half_back(kernel) -> None:  # type: ignore[no-untyped-def]
    """When the helper thread has not started its half by the time the caller's half is done,
    the caller bins both halves itself: the call neither waits for the helper nor loses the
    half it was given, and the job left in the helper's queue holds no reference to the
    caller's array."""
    helper = helper_thread()
    if helper is None:
        pytest.skip("one core: large arrays are binned on the calling thread alone")
    release = threading.Event()
    blocker = helper.submit(release.wait, 60)
    try:
        values = (RNG.standard_cauchy(SPLIT_FROM + 1001) * 50).astype(np.float32)
        kept = values.copy()
        compiled = histogram_proto(values, "tensorflow")
        assert not blocker.done(), "the helper was free: the test proves nothing"
        gone = weakref.ref(values)
        del values
        assert gone() is None, "the job taken back still holds the caller's array"
    finally:
        release.set()
    assert blocker.result(timeout=60)
    plain = histogram_proto(kept, EDGES)
    assert list(compiled.bucket) == list(plain.bucket)
    assert [compiled.min, compiled.max, compiled.num] == [plain.min, plain.max, plain.num]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_bins_with_a_helper_of_its_own(kernel) -> None:  # type: ignore[no-untyped-def]
    """The parent's helper thread is not in a forked child (and moving its CPUs from there
    would move the parent's thread): the child makes its own and bins as the parent does."""
    parent = helper_thread()
    if parent is None:
        pytest.skip("one core: large arrays are binned on the calling thread alone")
    values = (RNG.standard_normal(SPLIT_FROM * 2) * 3).astype(np.float32)
    expected = histogram_proto(values, "tensorflow").SerializeToString()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer through the pipe, never return into pytest
        code = 1
        try:
            child = helper_thread()
            same = child is parent or child is None or child._native_id == parent._native_id
            binned = histogram_proto(values, "tensorflow").SerializeToString()
            code = 0 if not same and binned == expected else 2
        finally:
            os.write(write, bytes([code]))
            os._exit(0)
    os.close(write)
    try:
        answered, _, _ = select.select([read], [], [], 300)
        answer = os.read(read, 1) if answered else b"no answer"
    finally:
        os.close(read)
        if not answered:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert answer == b"\x00", "the child reused the parent's helper or binned differently"
