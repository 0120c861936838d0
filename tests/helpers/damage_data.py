"""A MindSpore run with crafted values, for the tests of the damage the run list shows."""

from __future__ import annotations

from pathlib import Path

from sumlens._proto import summary_pb2
from sumlens.io import encode_record
from sumlens.io.naming import summary_file_name

CRAFTED_CORRUPT = 3
"""Records of :func:`write_crafted_run` that an indexing read refuses (steps 2, 3, 4)."""


def _event(step: int) -> summary_pb2.Event:
    event = summary_pb2.Event(step=step, wall_time=1000.0 + step)
    event.summary.value.add(tag="loss", scalar_value=1.0 / step)
    return event


def _image(event: summary_pb2.Event, width: int) -> None:
    image = event.summary.value.add(tag="img").image
    image.height, image.width, image.colorspace = 2, width, 3
    image.encoded_image = b"\x89PNG not really"


def _tensor(event: summary_pb2.Event, dims: list[int], data_type: int, values: list) -> None:
    tensor = event.summary.value.add(tag="t").tensor
    tensor.dims.extend(dims)
    tensor.data_type = data_type
    tensor.float_data.extend(values)


def _histogram(event: summary_pb2.Event, counts: list[int], nan_count: int = 0) -> None:
    histogram = event.summary.value.add(tag="h").histogram
    for left, count in enumerate(counts):
        histogram.buckets.add(left=float(left), width=1.0, count=count)
    histogram.count, histogram.nan_count = sum(counts) + nan_count, nan_count
    histogram.min, histogram.max, histogram.sum = 0.0, float(len(counts)), 1.0


def write_crafted_run(run: Path) -> None:
    """Steps 1-7 of a MindSpore run: 2, 3 and 4 crafted so that indexing refuses them, 5 and
    7 so that only their values show it; 1 and 6 good."""
    events = []
    for step in range(1, 8):
        event = _event(step)
        _image(event, -5 if step == 3 else 4)
        if step == 2:
            _tensor(event, [-1, 0], 11, [])  # a shape no tensor has
        elif step == 5:
            _tensor(event, [1], 2, [300.0])  # 300 as int8
        else:
            _tensor(event, [2], 11, [1.0, float(step)])
        if step == 4:
            _histogram(event, [1, 2], nan_count=-3)
        elif step == 7:
            _histogram(event, [4, -1])  # a negative bucket count
        else:
            _histogram(event, [1, step])
        events.append(encode_record(event.SerializeToString()))
    run.mkdir(parents=True)
    (run / summary_file_name(1_700_000_000, rank=0, host="h")).write_bytes(b"".join(events))
