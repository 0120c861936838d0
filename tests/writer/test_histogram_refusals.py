"""Histograms of NaN, infinities and the largest floats (issue 40, item 16): what torch's
writer bins is binned alike (the same buckets and statistics read back by TensorBoard's
``EventAccumulator``), what it refuses is refused where called, with a ``ValueError`` that
names ``values`` and the tag, and nothing is dropped on the writer thread."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.tensorboard import accumulator

from sumlens import SummaryWriter
from sumlens.writer.histogram import HISTOGRAM_KERNELS, tensorflow_edges

torch = pytest.importorskip("torch")
tb = pytest.importorskip("torch.utils.tensorboard")

NAN, INF, HUGE = math.nan, math.inf, 1.7e308
VALUES = {
    "nan among": np.array([1.0, NAN, 0.5]),
    "all nan": np.array([NAN, NAN, NAN]),
    "inf among": np.array([1.0, INF, -0.25]),
    "-inf among": np.array([-INF, 1.0]),
    "1.7e308 among": np.array([1.0, HUGE, 2.0]),
    "-1.7e308 among": np.array([-HUGE, 1.0]),
    "+-1.7e308 only": np.array([HUGE, -HUGE]),
    "float32 extremes only": np.array([3e38, -3e38], dtype=np.float32),
    "1e25 among": np.array([1e25, 1.0]),
    "int64 extremes": np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max]),
}
BINS: dict[str, Any] = {
    "default": "tensorflow",
    "default edges": tensorflow_edges().tolist(),  # numpy's path, as before the kernels
    "auto": "auto",
    "count": 10,
    "edges": [0.0, 0.5, 1.0, 2.0],
}
FIELDS = ("min", "max", "num", "sum", "sum_squares")


def _calls(writer: Any, values: np.ndarray) -> dict[str, type[BaseException] | None]:
    """Every bins for ``values`` as a numpy array and as a tensor; what each call raised."""
    raised: dict[str, type[BaseException] | None] = {}
    for bins_name, bins in BINS.items():
        for kind, given in (("numpy", values), ("tensor", torch.from_numpy(values))):
            tag = f"{bins_name}/{kind}"
            try:
                writer.add_histogram(tag, given, 3, bins=bins)
            except ValueError as err:
                raised[tag] = type(err)
                if isinstance(writer, SummaryWriter):
                    assert f"the argument 'values' of tag {tag!r} cannot be binned" in str(err)
                    assert "torch's writer refuses it too" in str(err)
            else:
                raised[tag] = None
    return raised


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("case", VALUES)
def test_histograms_binned_or_refused_as_torchs_writer_does(
    tmp_path: Path, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    assert HISTOGRAM_KERNELS.wait(timeout=600)  # the default bins binned by the kernels
    values = VALUES[case]
    with tb.SummaryWriter(str(tmp_path / "torch")) as theirs:
        expected = _calls(theirs, values)
    with caplog.at_level(logging.ERROR, logger="sumlens"), SummaryWriter(tmp_path / "ours") as ours:
        raised = _calls(ours, values)
    assert raised == expected
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # nothing dropped
    theirs_acc, ours_acc = accumulator(tmp_path / "torch"), accumulator(tmp_path / "ours")
    written = sorted(theirs_acc.Tags()["histograms"])
    assert sorted(ours_acc.Tags()["histograms"]) == written
    assert written == sorted(tag for tag, error in expected.items() if error is None)
    for tag in written:
        ((a,), (b,)) = theirs_acc.Histograms(tag), ours_acc.Histograms(tag)
        assert b.step == a.step == 3
        _assert_same(b.histogram_value, a.histogram_value, tag)


def _assert_same(mine: Any, reference: Any, tag: str) -> None:
    """Two histograms read back: the same buckets, and statistics equal (NaN to NaN)."""
    assert list(mine.bucket) == list(reference.bucket), tag
    np.testing.assert_allclose(mine.bucket_limit, reference.bucket_limit, err_msg=tag)
    for field in FIELDS:
        assert _same(getattr(mine, field), getattr(reference, field)), (tag, field)


@pytest.mark.parametrize(
    ("values", "bins", "reason"),
    [
        (np.array([NAN, 1.0]), 10, r"autodetected range of \[nan, nan\] is not finite"),
        (np.array([NAN, NAN]), "tensorflow", r"no value lies inside the bins' edges -9.92e\+19 "),
        (np.array([HUGE, -HUGE]), "fd", r"bins='fd'"),
        (np.array([5.0, 6.0]), [0.0, 1.0], r"no value lies inside the bins' edges 0 \.\. 1"),
    ],
)
def test_the_refusal_names_values_the_tag_and_what_is_allowed(
    tmp_path: Path, values: np.ndarray, bins: Any, reason: str
) -> None:
    with SummaryWriter(tmp_path) as writer, pytest.raises(ValueError, match=reason) as raised:
        writer.add_histogram("layer/weight", values, 1, bins=bins)
    message = str(raised.value)
    assert "add_histogram', the argument 'values' of tag 'layer/weight'" in message
    assert "bins='tensorflow' (the default) needs one value at least inside" in message


def test_raw_histograms_of_any_values_are_kept_as_torchs_writer_keeps_them(tmp_path: Path) -> None:
    def calls(writer: Any) -> None:
        writer.add_histogram_raw("nan", NAN, NAN, 3, NAN, NAN, [1.0, 2.0], [1, 1], 0)
        writer.add_histogram_raw("inf", 0.0, INF, 2, INF, INF, [1.0, INF], [1, 1], 1)
        writer.add_histogram_raw("huge", -HUGE, HUGE, 2, 0.0, INF, [-HUGE, HUGE], [1, 1], 2)

    for name, writer_class in (("torch", tb.SummaryWriter), ("ours", SummaryWriter)):
        with writer_class(str(tmp_path / name)) as writer:
            calls(writer)
    theirs, ours = accumulator(tmp_path / "torch"), accumulator(tmp_path / "ours")
    for tag in ("nan", "inf", "huge"):
        ((a,), (b,)) = theirs.Histograms(tag), ours.Histograms(tag)
        assert b.step == a.step
        _assert_same(b.histogram_value, a.histogram_value, tag)
