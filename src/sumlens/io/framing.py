"""Record framing: how each serialized event sits in a file, and how to find it again.

A record is ``u64 length | u32 masked CRC of the 8 length bytes | payload | u32 masked
CRC of the payload`` (all little-endian), back to back with no header or padding. This
module turns payloads into records and scans a byte buffer for them.

Scanning is where damage is met, and the rules are the same for every reader of ours
(the numba scanner in :mod:`sumlens.io._fastscan` follows them bit for bit):

* fewer bytes than a header, or a header whose payload runs past the end: the file ends
  here *for now* (a writer may still be appending, or was killed mid-record); the scan
  stops at that record's offset, so a later scan can resume from it;
* a payload whose CRC fails: that record is skipped and counted;
* a length whose CRC fails: the length cannot be trusted, so the scan moves forward one
  byte at a time until 12 bytes form a header with a valid CRC, counting the bytes it
  skipped. A damaged length therefore costs that one record, never the rest of the file.
"""

from __future__ import annotations

import struct
from collections.abc import Generator
from dataclasses import dataclass, field

from sumlens.io.crc import crc32c, mask, masked_crc32c

HEADER_SIZE = 12
"""Bytes before a payload: the 8-byte length and its 4-byte CRC."""
FOOTER_SIZE = 4
"""Bytes after a payload: its CRC."""
OVERHEAD = HEADER_SIZE + FOOTER_SIZE

_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_HEADER = struct.Struct("<QI")


def encode_record(payload: bytes) -> bytes:
    """Frame one serialized message as a record."""
    length = _U64.pack(len(payload))
    return b"".join(
        (length, _U32.pack(masked_crc32c(length)), payload, _U32.pack(masked_crc32c(payload)))
    )


@dataclass
class ReadStats:
    """What a scan met besides good records; readers fill one in and hand it to the caller.

    ``records``: good records found. ``corrupt_records``: records skipped because the
    payload CRC failed or the payload did not decode (not the expected message, or holding
    values no reader can honour: see :mod:`sumlens.io.decode`). ``skipped_bytes``:
    bytes passed over while resynchronising after a bad length CRC. ``torn_tail_bytes``:
    bytes after the last complete record of a file (a record still being written, or cut
    off). ``skipped_plugins``: values of kinds sumlens does not map, counted by kind.
    ``unreadable_files``: files of a run directory in which no record could be found.
    """

    records: int = 0
    corrupt_records: int = 0
    skipped_bytes: int = 0
    torn_tail_bytes: int = 0
    skipped_plugins: dict[str, int] = field(default_factory=dict)
    unreadable_files: list[str] = field(default_factory=list)

    def skip_plugin(self, name: str, count: int = 1) -> None:
        """Count ``count`` values of kind ``name`` that were not returned."""
        self.skipped_plugins[name] = self.skipped_plugins.get(name, 0) + count

    def reject_record(self) -> None:
        """Recount a record that passed its CRCs as corrupt (its payload did not decode)."""
        self.records -= 1
        self.corrupt_records += 1

    def merge(self, other: ReadStats) -> None:
        """Add the counts of ``other`` to these."""
        self.records += other.records
        self.corrupt_records += other.corrupt_records
        self.skipped_bytes += other.skipped_bytes
        self.torn_tail_bytes += other.torn_tail_bytes
        for name, count in other.skipped_plugins.items():
            self.skip_plugin(name, count)
        self.unreadable_files.extend(other.unreadable_files)

    @property
    def damaged(self) -> bool:
        """True when anything was skipped for being corrupt (a torn tail is not damage)."""
        return bool(self.corrupt_records or self.skipped_bytes or self.unreadable_files)


def valid_header_at(buf: bytes | memoryview, pos: int) -> bool:
    """Whether the 12 bytes at ``pos`` are a length with a matching masked CRC."""
    length_bytes = buf[pos : pos + 8]
    return mask(crc32c(length_bytes)) == _U32.unpack_from(buf, pos + 8)[0]


def scan_records(
    buf: bytes | memoryview, pos: int, end: int, stats: ReadStats
) -> Generator[tuple[int, int, int], None, int]:
    """Yield ``(record_offset, payload_offset, payload_length)`` for each good record.

    Scans ``buf[pos:end]``. When the generator finishes, its return value (visible as
    ``StopIteration.value``; see :func:`scan_all`) is the offset where a later scan must
    resume: the start of an incomplete record, or ``end``.
    """
    crc = crc32c
    unpack_header = _HEADER.unpack_from
    unpack_u32 = _U32.unpack_from
    view = memoryview(buf)
    while end - pos >= HEADER_SIZE:
        length, length_crc = unpack_header(view, pos)
        if mask(crc(view[pos : pos + 8])) != length_crc:
            pos = _resync(view, pos + 1, end, stats)
            continue
        payload = pos + HEADER_SIZE
        if length > end - payload - FOOTER_SIZE:
            return pos
        if mask(crc(view[payload : payload + length])) != unpack_u32(view, payload + length)[0]:
            stats.corrupt_records += 1
        else:
            stats.records += 1
            yield pos, payload, length
        pos = payload + length + FOOTER_SIZE
    return pos


def _resync(view: memoryview, pos: int, end: int, stats: ReadStats) -> int:
    """Find the next offset holding a valid header, counting the bytes passed over."""
    start = pos - 1
    last = end - HEADER_SIZE
    while pos <= last and not valid_header_at(view, pos):
        pos += 1
    stats.skipped_bytes += pos - start
    return pos


def scan_all(
    buf: bytes | memoryview, pos: int, end: int, stats: ReadStats
) -> tuple[list[tuple[int, int, int]], int]:
    """Run :func:`scan_records` to the end; return the records and the resume offset."""
    records: list[tuple[int, int, int]] = []
    gen = scan_records(buf, pos, end, stats)
    while True:
        try:
            records.append(next(gen))
        except StopIteration as stop:
            return records, stop.value
