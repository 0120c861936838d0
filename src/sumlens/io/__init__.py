"""Bytes on disk: record framing, file naming and readers for MindSpore and TensorBoard files."""

from sumlens.io.crc import masked_crc32c
from sumlens.io.describe import describe
from sumlens.io.events import PLUGINS, Event, Histogram, Image
from sumlens.io.framing import ReadStats, encode_record
from sumlens.io.reader import EventStream, NotAnEventFileError, RecordFile, iter_events
from sumlens.io.scalars import Scalars, read_scalars
from sumlens.io.writer import RecordWriter

__all__ = [
    "PLUGINS",
    "Event",
    "EventStream",
    "Histogram",
    "Image",
    "NotAnEventFileError",
    "ReadStats",
    "RecordFile",
    "RecordWriter",
    "Scalars",
    "describe",
    "encode_record",
    "iter_events",
    "masked_crc32c",
    "read_scalars",
]
