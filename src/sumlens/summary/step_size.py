"""The fewest bytes a step's records can take in a summary file, known at ``record()``.

A step's heavy values are encoded on the writer thread (PNG, histogram buckets, packed
tensors), so their exact size is not known when ``record()`` returns. A lower bound is:
each value's tag and framing, a scalar's four bytes, a tensor's bytes per element, a
histogram's buckets once binned, a message's own size. When even that bound, with the
file's version record, exceeds ``max_file_size``, no file can ever hold the record, and
``SummaryRecord.record`` says so at once (it returns False, and raises with
``raise_exception=True``) instead of a failure that only the writer thread would see.

The bounds follow the layouts of :mod:`sumlens.summary.encoders`: in MindSpore's format
one ``Event`` holds every value of a step and each graph has an ``Event`` of its own; in
TensorBoard's each value has its own. Lineage goes to the lineage file, which has no
size limit. A bound never exceeds the true size, so a step that fits is never refused.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from sumlens.io.events import Histogram
from sumlens.summary.histogram import bucket_count
from sumlens.summary.items import TENSORBOARD_EVENT, Item

FRAME_BYTES = 16
"""A record's framing: its length (8 bytes) and two CRCs (4 each)."""
TENSORBOARD_PLUGINS = frozenset({"scalar", "image", "histogram", "tensor"})
"""Plugins with a record in a TensorBoard file (the others are not written there)."""
LINEAGE_PLUGINS = frozenset(
    {"train_lineage", "eval_lineage", "dataset_graph", "custom_lineage_data"}
)
"""Plugins written to the lineage file (never limited)."""
_WALL_BYTES = 9
"""An event's ``wall_time``: its key and a double."""
_MS_BUCKET_BYTES = 22
"""The least bytes of a MindSpore histogram bucket: key, length, two doubles, a count."""
_TB_BUCKET_BYTES = 16
"""The least bytes of a TensorBoard bucket: its limit and its count, two packed doubles."""


def varint_size(value: int) -> int:
    """Bytes of ``value`` as a protobuf varint (a negative int64 takes ten)."""
    if value < 0:
        return 10
    return max(1, (value.bit_length() + 6) // 7)


def field_size(length: int) -> int:
    """Bytes of a length-delimited field of ``length`` bytes (field numbers below 16)."""
    return 1 + varint_size(length) + length


def _tag_bytes(tag: str) -> int:
    return len(tag) if tag.isascii() else len(tag.encode("utf-8"))


def _least_content(item: Item, file_format: str) -> int:
    """The fewest bytes of the value part (beside its tag) of ``item``'s ``Summary.Value``."""
    plugin, value = item.plugin, item.value
    if plugin == "scalar":
        return 5
    if plugin == "histogram":
        buckets = 0  # a float array not yet binned may hold no finite value
        if isinstance(value, Histogram):
            buckets = value.counts.size
        elif isinstance(value, np.ndarray) and value.dtype.kind in "biu":
            buckets = bucket_count(value.size)  # every value is finite
        each = _TB_BUCKET_BYTES if file_format == "tensorboard" else _MS_BUCKET_BYTES
        return field_size(buckets * each)
    if plugin == "tensor" and isinstance(value, np.ndarray):
        each = value.itemsize if file_format == "tensorboard" else 4
        return field_size(field_size(each * value.size) if value.size else 0)
    if plugin == "landscape":
        return field_size(value.ByteSize())
    return field_size(0)  # an image: its PNG is made by the writer


def _least_value(item: Item, file_format: str) -> int:
    """The fewest bytes of ``item`` as an entry of ``Summary.value``."""
    return field_size(field_size(_tag_bytes(item.tag)) + _least_content(item, file_format))


def _event(step: int, body: int) -> int:
    """Bytes of a framed event holding ``step`` and a length-delimited field of ``body``."""
    return FRAME_BYTES + _WALL_BYTES + 1 + varint_size(step) + field_size(body)


def oversized_scalars(
    step: int, tags: Iterable[str], file_format: str, room: int
) -> tuple[list[str], int]:
    """What :func:`oversized` finds for a step holding only scalars, named by ``tags``:
    the tags whose record would need more than ``room`` bytes, and its least bytes."""
    values = {tag: field_size(field_size(_tag_bytes(tag)) + 5) for tag in tags}
    if file_format == "tensorboard":
        too_large = [tag for tag, size in values.items() if _event(step, size) > room]
        largest = max((_event(step, values[tag]) for tag in too_large), default=0)
        return too_large, largest
    least = _event(step, sum(values.values()))
    return (list(values), least) if least > room else ([], 0)


def oversized(items: list[Item], step: int, file_format: str, room: int) -> tuple[list[Item], int]:
    """The items of one step whose record would need more than ``room`` bytes, and the
    least bytes of the largest such record (0 when there is none).

    ``room`` is what a file holds besides its version record. In MindSpore's format the
    step's values share one record (so all of them are too large together) and each
    graph has its own; in TensorBoard's every value has its own record.
    """
    too_large: list[Item] = []
    largest = 0
    shared: list[Item] = []
    for item in items:
        if item.plugin in LINEAGE_PLUGINS:
            continue
        if item.plugin == TENSORBOARD_EVENT:  # its own event; in MindSpore's format, its
            if file_format != "tensorboard":  # own file, which has no size limit
                continue
            least = FRAME_BYTES + item.nbytes
        elif file_format == "tensorboard":
            if item.plugin not in TENSORBOARD_PLUGINS:
                continue
            least = _event(step, _least_value(item, file_format))
        elif item.plugin == "graph":
            least = _event(step, item.value.ByteSize())
        else:
            shared.append(item)
            continue
        if least > room:
            too_large.append(item)
            largest = max(largest, least)
    if shared:
        least = _event(step, sum(_least_value(item, file_format) for item in shared))
        if least > room:
            too_large += shared
            largest = max(largest, least)
    return too_large, largest
