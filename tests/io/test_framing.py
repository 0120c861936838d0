"""Record framing: encode_record, scan_records and RecordFile, including resuming a growing file."""

from __future__ import annotations

import struct
from pathlib import Path

import crc32c
import pytest
from helpers.file_modes import umask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sumlens.io.reader as reader_module
from sumlens.io import RecordFile, RecordWriter, encode_record, masked_crc32c
from sumlens.io.crc import MASK_DELTA, mask, unmask
from sumlens.io.framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    OVERHEAD,
    ReadStats,
    scan_all,
    scan_records,
    valid_header_at,
)

ALL_PLUGINS_MS = "all_plugins/events.out.events.summary.1795304162.0.vm_MS"

payload_lists = st.lists(st.binary(max_size=600), max_size=30)
# Large payloads are cheap to build from a size and a fill byte (hypothesis is slow at
# drawing megabytes of random bytes).
large_payloads = st.builds(
    lambda size, fill, head: head + bytes([fill]) * size,
    st.integers(min_value=0, max_value=3 << 20),
    st.integers(min_value=0, max_value=255),
    st.binary(max_size=16),
)
mixed_payload_lists = st.lists(st.one_of(st.binary(max_size=600), large_payloads), max_size=6)


def frame(payloads: list[bytes]) -> bytes:
    return b"".join(encode_record(p) for p in payloads)


def record_offsets(payloads: list[bytes]) -> list[int]:
    offsets, pos = [], 0
    for payload in payloads:
        offsets.append(pos)
        pos += len(payload) + OVERHEAD
    return offsets


# ----------------------------------------------------------------------------- CRC and mask


def test_documented_example_first_record(golden_dir: Path) -> None:
    data = (golden_dir / ALL_PLUGINS_MS).read_bytes()
    head = data[:48]
    assert head[:8] == bytes.fromhex("1c00000000000000")
    (length,) = struct.unpack("<Q", head[:8])
    assert length == 28
    stored = struct.unpack("<I", head[8:12])[0]
    assert head[8:12] == bytes.fromhex("c8c1951d")
    assert stored == 0x1D95C1C8
    assert masked_crc32c(head[:8]) == 0x1D95C1C8
    assert crc32c.crc32c(head[:8]) == 0x6B783D89
    assert unmask(stored) == 0x6B783D89
    payload = head[12:40]
    assert payload[0] == 0x09  # field 1 (wall_time), fixed64
    assert payload[9:11] == b"\x1a\x11"  # field 3 (version), 17 bytes
    assert payload[11:] == b"MindSpore.Event:1"
    assert head[40:44] == bytes.fromhex("e1968dbf")
    assert struct.unpack("<I", head[40:44])[0] == masked_crc32c(payload)
    # Re-framing the payload gives the same 44 bytes; the next record starts at 44.
    assert encode_record(payload) == head[:44]
    assert valid_header_at(data, 44)
    assert not valid_header_at(data, 43)


def test_mask_constants() -> None:
    assert MASK_DELTA == 0xA282EAD8
    assert mask(0) == MASK_DELTA
    assert unmask(MASK_DELTA) == 0


@given(st.integers(min_value=0, max_value=0xFFFFFFFF))
def test_mask_unmask_are_inverse(crc: int) -> None:
    masked = mask(crc)
    assert 0 <= masked <= 0xFFFFFFFF
    assert unmask(masked) == crc
    assert mask(unmask(crc)) == crc
    rotated = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
    assert masked == (rotated + MASK_DELTA) & 0xFFFFFFFF


@given(st.binary(max_size=200))
def test_masked_crc32c_is_mask_of_crc32c(data: bytes) -> None:
    assert masked_crc32c(data) == mask(crc32c.crc32c(data))


# ----------------------------------------------------------------------------- encoding


@given(st.binary(max_size=2000))
def test_encode_record_layout(payload: bytes) -> None:
    record = encode_record(payload)
    assert len(record) == len(payload) + HEADER_SIZE + FOOTER_SIZE
    assert struct.unpack_from("<Q", record, 0)[0] == len(payload)
    assert struct.unpack_from("<I", record, 8)[0] == masked_crc32c(record[:8])
    assert record[HEADER_SIZE : HEADER_SIZE + len(payload)] == payload
    assert struct.unpack_from("<I", record, len(record) - 4)[0] == masked_crc32c(payload)


def test_empty_payload_record() -> None:
    record = encode_record(b"")
    assert len(record) == OVERHEAD
    records, stop = scan_all(record, 0, len(record), stats := ReadStats())
    assert records == [(0, HEADER_SIZE, 0)]
    assert stop == len(record)
    assert stats == ReadStats(records=1)


# ----------------------------------------------------------------------------- round trips


@given(payload_lists)
def test_scan_records_round_trip(payloads: list[bytes]) -> None:
    data = frame(payloads)
    stats = ReadStats()
    records, stop = scan_all(data, 0, len(data), stats)
    assert [data[start : start + length] for _, start, length in records] == payloads
    assert [offset for offset, _, _ in records] == record_offsets(payloads)
    assert stop == len(data)
    assert stats == ReadStats(records=len(payloads))
    assert not stats.damaged


@given(payload_lists, st.binary(max_size=40), st.binary(max_size=40))
def test_scan_records_inside_a_larger_buffer(
    payloads: list[bytes], before: bytes, after: bytes
) -> None:
    data = frame(payloads)
    buf = before + data + after
    gen = scan_records(buf, len(before), len(before) + len(data), stats := ReadStats())
    found = list(gen)
    assert [buf[start : start + length] for _, start, length in found] == payloads
    assert stats.records == len(payloads)


@given(payload_lists, st.data())
def test_scan_records_stops_at_an_incomplete_record(payloads: list[bytes], data) -> None:
    full = frame(payloads)
    cut = data.draw(st.integers(min_value=0, max_value=len(full)), label="cut")
    stats = ReadStats()
    records, stop = scan_all(full[:cut], 0, cut, stats)
    offsets = [*record_offsets(payloads), len(full)]
    complete = [p for p, end in zip(payloads, offsets[1:], strict=True) if end <= cut]
    assert [full[s : s + n] for _, s, n in records] == complete
    # The scan resumes at the start of the first incomplete record.
    assert stop == offsets[len(complete)] if len(complete) < len(payloads) else stop == cut
    assert stats == ReadStats(records=len(complete))


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payloads=payload_lists, chunk=st.sampled_from([None, 1, 13, 64, 1000]))
def test_record_file_round_trip(tmp_path: Path, payloads: list[bytes], chunk: int | None) -> None:
    """Whole records come back whatever the read chunk size (small ones force many reads)."""
    path = tmp_path / "round_trip.bin"
    path.write_bytes(frame(payloads))
    with pytest.MonkeyPatch.context() as patch:
        if chunk is not None:
            patch.setattr(reader_module, "CHUNK_SIZE", chunk)
        record_file = RecordFile(path)
        assert list(record_file.read_payloads()) == payloads
        assert record_file.offset == path.stat().st_size
        assert record_file.stats == ReadStats(records=len(payloads))
        # Nothing new: a second read returns nothing and stays put.
        assert list(record_file.read_payloads()) == []
        assert record_file.offset == path.stat().st_size


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(payloads=mixed_payload_lists, chunk=st.sampled_from([None, 4096, 1 << 20]))
def test_large_and_empty_payloads_round_trip(
    tmp_path: Path, payloads: list[bytes], chunk: int | None
) -> None:
    data = frame(payloads)
    records, stop = scan_all(data, 0, len(data), stats := ReadStats())
    assert [data[s : s + n] for _, s, n in records] == payloads
    assert stop == len(data)
    assert stats == ReadStats(records=len(payloads))
    path = tmp_path / "large.bin"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        if chunk is not None:
            patch.setattr(reader_module, "CHUNK_SIZE", chunk)
        record_file = RecordFile(path)
        assert list(record_file.read_payloads()) == payloads
        assert record_file.offset == len(data)


@pytest.mark.parametrize("size", [0, 1, 65535, 1 << 20])
def test_record_writer_round_trip(tmp_path: Path, size: int) -> None:
    payloads = [bytes(range(256)) * (size // 256) + b"x" * (size % 256), b"", b"tail"]
    path = tmp_path / "events.out.events.summary.1.0.h_MS"
    with umask(0o022), RecordWriter(path) as writer:
        writer.write_many(payloads)
        assert writer.bytes_written == sum(len(p) + OVERHEAD for p in payloads)
    assert path.stat().st_mode & 0o777 == 0o644  # as open() makes files
    with RecordWriter(path.with_name("owner-only"), owner_only=True):
        pass
    assert path.with_name("owner-only").stat().st_mode & 0o777 == 0o600
    assert path.read_bytes() == frame(payloads)
    assert list(RecordFile(path).read_payloads()) == payloads


def test_record_larger_than_a_chunk(tmp_path: Path) -> None:
    big = bytes(range(251)) * ((reader_module.CHUNK_SIZE + 4096) // 251)
    assert len(big) > reader_module.CHUNK_SIZE
    payloads = [b"first", big, b"last"]
    path = tmp_path / "big.bin"
    path.write_bytes(frame(payloads))
    record_file = RecordFile(path)
    got = list(record_file.read_payloads())
    assert len(got) == 3
    assert got[0] == b"first"
    assert got[1] == big
    assert got[2] == b"last"
    assert record_file.offset == path.stat().st_size
    assert record_file.stats == ReadStats(records=3)


# ----------------------------------------------------------------------------- resuming


def test_resume_reads_only_new_records_and_counts_the_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "events.out.events.summary.1.0.h_MS"
    first = [b"alpha", b"", b"gamma" * 50]
    with RecordWriter(path) as writer:
        writer.write_many(first)
        writer.flush()

        record_file = RecordFile(path)
        stats = ReadStats()
        assert list(record_file.read_payloads(stats)) == first
        end_of_first = len(frame(first))
        assert record_file.offset == end_of_first
        assert stats == ReadStats(records=3)

        # More records, then a record of which only the first half has been written.
        second = [b"delta", b"epsilon" * 7]
        writer.write_many(second)
        writer.flush()
    torn = encode_record(b"zeta" * 40)
    half = len(torn) // 2
    with open(path, "ab") as handle:
        handle.write(torn[:half])

    stats = ReadStats()
    assert list(record_file.read_payloads(stats)) == second
    torn_at = end_of_first + len(frame(second))
    assert record_file.offset == torn_at
    assert stats == ReadStats(records=2, torn_tail_bytes=half)
    assert not stats.damaged

    # Reading again before the writer goes on: nothing new, the same torn tail.
    stats = ReadStats()
    assert list(record_file.read_payloads(stats)) == []
    assert record_file.offset == torn_at
    assert stats == ReadStats(torn_tail_bytes=half)

    # A header cut in the middle is a torn tail as well.
    with open(path, "ab") as handle:
        handle.write(torn[half:])
        handle.write(encode_record(b"eta"))
        handle.write(encode_record(b"theta")[:5])
    stats = ReadStats()
    assert list(record_file.read_payloads(stats)) == [b"zeta" * 40, b"eta"]
    assert stats == ReadStats(records=2, torn_tail_bytes=5)
    with open(path, "ab") as handle:
        handle.write(encode_record(b"theta")[5:])
    stats = ReadStats()
    assert list(record_file.read_payloads(stats)) == [b"theta"]
    assert stats == ReadStats(records=1)
    assert record_file.offset == path.stat().st_size

    # A fresh reader sees everything, and a reader opened at a saved offset only the rest.
    everything = [*first, *second, b"zeta" * 40, b"eta", b"theta"]
    assert list(RecordFile(path).read_payloads()) == everything
    assert list(RecordFile(path, offset=torn_at).read_payloads()) == everything[5:]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payloads=payload_lists, data=st.data())
def test_resume_at_any_cut(tmp_path: Path, payloads: list[bytes], data) -> None:
    """Reading a prefix, then the rest, gives every record exactly once."""
    full = frame(payloads)
    cut = data.draw(st.integers(min_value=0, max_value=len(full)), label="cut")
    path = tmp_path / "grow.bin"
    path.write_bytes(full[:cut])
    record_file = RecordFile(path)
    first_stats = ReadStats()
    got = list(record_file.read_payloads(first_stats))
    offsets = [*record_offsets(payloads), len(full)]
    assert record_file.offset == max(o for o in offsets if o <= cut)
    assert first_stats.torn_tail_bytes == cut - record_file.offset
    path.write_bytes(full)
    second_stats = ReadStats()
    got += list(record_file.read_payloads(second_stats))
    assert got == payloads
    assert second_stats.torn_tail_bytes == 0
    assert first_stats.records + second_stats.records == len(payloads)


def test_record_file_own_stats_count_a_torn_tail_once(tmp_path: Path) -> None:
    path = tmp_path / "poll.bin"
    record = encode_record(b"payload" * 10)
    path.write_bytes(record[:30])
    record_file = RecordFile(path)
    for _ in range(3):  # a poller finding the writer still busy
        assert list(record_file.read_payloads()) == []
    assert record_file.stats.torn_tail_bytes == 30
    path.write_bytes(record)
    assert list(record_file.read_payloads()) == [b"payload" * 10]
    assert record_file.stats == ReadStats(records=1)
