"""What the writer accepts, the readers read back (issue 25 item 16).

In MindSpore's format a step is one record: a value the readers refuse takes the whole
step with it, the loss included. The readers' limits (``sumlens.io.decode``: at most
``MAX_DIMS`` dims, integer values within their dtype, protobuf's nesting limit) were
checked against what ``add_value`` accepts; each gap is closed where the value is given
(refused with a clear error) or in how it is written (so that it reads back).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from sumlens import SummaryRecord, ops
from sumlens.io import iter_events, read_scalars
from sumlens.io.decode import MAX_DIMS
from sumlens.lineage import DatasetGraph

FORMATS = ["mindspore", "tensorboard"]
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def read_back(directory: Path) -> dict[tuple[int, str], object]:
    """Every value of a run by (step, tag); fails if any record was refused as damaged."""
    stream = iter_events(directory)
    events = {(e.step, e.tag): e.value for e in stream}
    assert stream.stats.corrupt_records == 0, stream.stats
    return events


@pytest.mark.parametrize("file_format", FORMATS)
@pytest.mark.parametrize("dims", [MAX_DIMS + 1, 40])
def test_a_tensor_of_more_dims_than_readers_take_is_refused_where_it_is_added(
    tmp_path: Path, file_format: str, dims: int
) -> None:
    with SummaryRecord(tmp_path, file_format=file_format) as rec:
        rec.add_value("scalar", "loss", 0.5)
        with pytest.raises(ValueError, match=rf"'deep' has {dims} dimensions.*at most {MAX_DIMS}"):
            rec.add_value("tensor", "deep", np.zeros((1,) * dims))
        rec.add_value("tensor", "widest", np.zeros((1,) * MAX_DIMS))
        assert rec.record(1)
    values = read_back(tmp_path)
    assert values[(1, "loss")] == 0.5  # the step is not lost
    assert values[(1, "widest")].shape == (1,) * MAX_DIMS


def test_a_summary_operator_tensor_of_too_many_dims_is_refused_in_forward(tmp_path: Path) -> None:
    class Deep(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            ops.tensor("deep", x.reshape((1,) * 40))
            return x

    with SummaryRecord(tmp_path), pytest.raises(ValueError, match="'deep' has 40 dimensions"):
        Deep()(torch.zeros(1))


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("file_format", FORMATS)
def test_integer_tensors_at_the_ends_of_their_type_read_back(
    tmp_path: Path, dtype: type, file_format: str
) -> None:
    # MindSpore's format keeps every value as float32: 2**31 - 1 became 2**31, which no
    # int32 holds, and the readers refused the record with the step's loss.
    info = np.iinfo(dtype)
    values = np.array([info.min, info.max, 0, info.max // 3], dtype=dtype)
    with SummaryRecord(tmp_path, file_format=file_format) as rec:
        rec.add_value("scalar", "loss", 0.5)
        rec.add_value("tensor", "ends", values)
        assert rec.record(1)
    read = read_back(tmp_path)
    assert read[(1, "loss")] == 0.5
    tensor = read[(1, "ends")]
    assert tensor.dtype == values.dtype
    if file_format == "tensorboard":
        np.testing.assert_array_equal(tensor, values)  # raw bytes: exact
        return
    as_float = values.astype(np.float32)  # what float32 makes of them
    top = int(info.max)
    for got, wanted, rounded in zip(
        tensor.tolist(), values.tolist(), as_float.tolist(), strict=True
    ):
        assert info.min <= got <= top
        # the float32 nearest the value, or the largest float32 within the type
        assert got == int(rounded) or (int(rounded) > top and got < wanted)
        assert abs(got - wanted) <= max(1, abs(wanted)) * 2**-23


def test_float64_tensors_beyond_float32_read_back_as_infinities_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    values = np.array([1e300, -1e300, 1.0, np.inf])
    with caplog.at_level(logging.WARNING, logger="sumlens"), SummaryRecord(tmp_path) as rec:
        for step in (1, 2, 3):
            rec.add_value("scalar", "loss", 0.5)
            rec.add_value("tensor", "huge", values)
            rec.record(step)
    read = read_back(tmp_path)
    assert read[(3, "loss")] == 0.5
    np.testing.assert_array_equal(read[(3, "huge")], [np.inf, -np.inf, 1.0, np.inf])
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "'huge'" in said[0] and "float32" in said[0], said


def chain(operations: int) -> DatasetGraph:
    """A data pipeline of ``operations`` operations, each the child of the next."""
    graph = DatasetGraph("Source")
    for index in range(operations - 1):
        graph = DatasetGraph(f"Map{index}", children=[graph])
    return graph


def test_a_dataset_graph_nested_deeper_than_readers_parse_is_refused(tmp_path: Path) -> None:
    # protobuf's parsers read 100 nested messages in a record; a pipeline of 98
    # operations was written, and the lineage record could never be read back.
    accepted = []
    with SummaryRecord(tmp_path) as rec:
        for operations in range(90, 105):
            try:
                rec.add_value("dataset_graph", "train_dataset", chain(operations))
            except ValueError as err:
                assert "nests messages more than" in str(err)
                assert "could never be read back" in str(err)
                continue
            accepted.append(operations)
            rec.add_value("scalar", "loss", 0.5)
            rec.record(operations)
    assert accepted == list(range(90, accepted[-1] + 1)) and accepted[-1] < 104
    stream = iter_events(tmp_path)
    lineage = [e for e in stream if e.plugin == "dataset_graph"]
    assert stream.stats.corrupt_records == 0
    assert len(lineage) == len(accepted)  # the deepest accepted one reads back too
    assert read_scalars(tmp_path)["loss"][0].tolist() == accepted


@pytest.mark.parametrize("file_format", FORMATS)
def test_every_dtype_at_its_extremes_reads_back_with_its_step(
    tmp_path: Path, file_format: str
) -> None:
    # The audit's round trip: tensors and histograms of every dtype the writer takes, at
    # the ends of their ranges (and NaN and infinities for floats), in one step.
    arrays = {
        f"{np.dtype(t).name}": np.array([np.iinfo(t).min, np.iinfo(t).max], t) for t in INT_DTYPES
    }
    for dtype in (np.float16, np.float32, np.float64):
        info = np.finfo(dtype)
        arrays[np.dtype(dtype).name] = np.array(
            [info.min, info.max, info.tiny, np.nan, np.inf, -np.inf], dtype
        )
    arrays["bool"] = np.array([True, False])
    with SummaryRecord(tmp_path, file_format=file_format) as rec:
        rec.add_value("scalar", "loss", 0.5)
        for name, array in arrays.items():
            rec.add_value("tensor", f"t/{name}", array)
            rec.add_value("histogram", f"h/{name}", array)
        assert rec.record(1)
    read = read_back(tmp_path)
    assert read[(1, "loss")] == 0.5
    for name, array in arrays.items():
        assert read[(1, f"t/{name}")].shape == array.shape, name
        hist = read[(1, f"h/{name}")]
        finite = np.isfinite(array.astype(np.float64))
        assert hist.counts.sum() == finite.sum(), name
