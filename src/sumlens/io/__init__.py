"""Bytes on disk: record framing, file naming and readers for MindSpore and TensorBoard files."""

from sumlens.io.crc import masked_crc32c
from sumlens.io.describe import describe
from sumlens.io.events import PLUGINS, Audio, Event, Histogram, Image, Text
from sumlens.io.framing import ReadStats, encode_record
from sumlens.io.reader import (
    EventStream,
    NotAnEventFileError,
    RecordChangedError,
    RecordFile,
    iter_events,
    read_events_at,
    read_record_at,
)
from sumlens.io.remote import RemoteStorageError, is_url, open_storage, parse_storage_options
from sumlens.io.scalars import (
    Scalars,
    fast_engine_cached,
    fast_engine_ready,
    read_file_scalars,
    read_scalars,
)
from sumlens.io.writer import RecordWriter

__all__ = [
    "PLUGINS",
    "Audio",
    "Event",
    "EventStream",
    "Histogram",
    "Image",
    "NotAnEventFileError",
    "ReadStats",
    "RecordChangedError",
    "RecordFile",
    "RecordWriter",
    "RemoteStorageError",
    "Scalars",
    "Text",
    "describe",
    "encode_record",
    "fast_engine_cached",
    "fast_engine_ready",
    "is_url",
    "iter_events",
    "masked_crc32c",
    "open_storage",
    "parse_storage_options",
    "read_events_at",
    "read_file_scalars",
    "read_record_at",
    "read_scalars",
]
