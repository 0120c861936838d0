"""The numba scanner gives exactly what the python (protobuf) engine gives, damage included.

Every test compares :func:`sumlens.io._fastscan.scan_file_scalars` with the reference
``_python_file_scalars`` on the same file: same tags in the same order, bit-identical
columns, the same :class:`~sumlens.io.framing.ReadStats` and the same
``NotAnEventFileError``.
"""

from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.wire import varint

pytest.importorskip("numba")

from sumlens._proto import summary_pb2, tensorboard_pb2
from sumlens.io import NotAnEventFileError, RecordWriter, read_scalars
from sumlens.io import _fastscan as fastscan
from sumlens.io import reader as reader_module
from sumlens.io.framing import ReadStats, encode_record
from sumlens.io.scalars import _python_file_scalars

SHARED_GOLDEN = Path("/work/shared/golden/mindspore")


@pytest.fixture(scope="module")
def golden_root() -> Path:
    local = Path(__file__).parent.parent / "data" / "golden"
    root = local if local.is_dir() else SHARED_GOLDEN
    if not root.is_dir():
        pytest.skip("no golden MindSpore files")
    return root


# ---------------------------------------------------------------------------- helpers


def _run(fn, path: Path, kind: str):
    stats = ReadStats()
    try:
        result = fn(path, kind, stats)
    except NotAnEventFileError:
        result = NotAnEventFileError
    return result, stats


def assert_same(path: Path, kind: str) -> dict:
    """Both engines on ``path``; assert identical results and stats, return the result."""
    expected, expected_stats = _run(_python_file_scalars, path, kind)
    got, got_stats = _run(fastscan.scan_file_scalars, path, kind)
    assert got_stats == expected_stats
    if expected is NotAnEventFileError:
        assert got is NotAnEventFileError
        return {}
    assert got is not NotAnEventFileError
    assert list(got) == list(expected)
    for tag, columns in expected.items():
        for want, have, dtype in zip(columns, got[tag], ("<i8", "<f8", "<f8"), strict=True):
            assert have.dtype == np.dtype(dtype)
            assert have.shape == want.shape
            assert have.view(np.int64).tolist() == want.view(np.int64).tolist(), tag
    return got


def write(path: Path, payloads: list[bytes]) -> Path:
    with RecordWriter(path) as writer:
        writer.write_many(payloads)
    return path


def _key(number: int, wire: int) -> bytes:
    return varint((number << 3) | wire)


def _len_field(number: int, data: bytes) -> bytes:
    return _key(number, 2) + varint(len(data)) + data


def raw_event(wall: float, step: int, summary_values: list[bytes]) -> bytes:
    """An Event with a Summary of hand-built Value messages (for malformed contents)."""
    summary = b"".join(_len_field(1, value) for value in summary_values)
    return _key(1, 1) + struct.pack("<d", wall) + _key(2, 0) + varint(step) + _len_field(5, summary)


# ---------------------------------------------------------------- MindSpore payloads


def ms_event(step: int, wall: float, **what) -> summary_pb2.Event:
    return summary_pb2.Event(step=step, wall_time=wall, **what)


def ms_payloads(steps: int = 40, tags: int = 30, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    out = [ms_event(0, 1.0, version="MindSpore.Event:1").SerializeToString()]
    graph = ms_event(0, 1.5)
    graph.graph_def.name = "net"
    out.append(graph.SerializeToString())
    specials = [float("nan"), float("inf"), -float("inf"), -0.0, 1e-45, 3.4e38]
    for step in range(-3, steps):
        event = ms_event(step, 1000.0 + step * 0.25)
        values = event.summary.value
        for k in range(step % 7 + 1):
            tag = f"loss/{(step * 3 + k) % tags}" if k % 3 else "精度/acc"
            value = specials[step % len(specials)] if k == 2 else float(rng.normal())
            values.add(tag=tag, scalar_value=value)
        if step % 2 == 0:
            hist = values.add(tag="w").histogram
            for i in range(30):
                hist.buckets.add(left=i * 0.1, width=0.1, count=i)
            hist.min, hist.max, hist.sum, hist.count = 0.0, 3.0, 10.0, 435
        if step % 3 == 0:
            tensor = values.add(tag="t").tensor
            tensor.dims.extend([2, 3])
            tensor.data_type = 11
            tensor.float_data.extend(range(6))
        if step % 5 == 0:
            image = values.add(tag="img").image
            image.height, image.width, image.colorspace = 2, 2, 3
            image.encoded_image = bytes(range(50))
        if step % 11 == 0:
            point = values.add(tag="landscape").loss_landscape.landscape
            point.x.dims.append(2)
            point.x.float_data.extend([1.0, 2.0])
        out.append(event.SerializeToString())
    # Records the kernel hands to protobuf, and what protobuf makes of them.
    bad_tensor = ms_event(50, 2.0)
    bad_tensor.summary.value.add(tag="loss/0", scalar_value=7.0)
    tensor = bad_tensor.summary.value.add(tag="t").tensor
    tensor.dims.extend([2, 2])
    tensor.float_data.extend([1.0, 2.0, 3.0])  # PayloadError: the record is rejected
    out.append(bad_tensor.SerializeToString())
    raw_tensor = ms_event(51, 2.0)
    raw_tensor.summary.value.add(tag="loss/1", scalar_value=8.0)
    tensor = raw_tensor.summary.value.add(tag="t").tensor
    tensor.dims.append(2)
    tensor.data_type = 12
    tensor.raw_data = struct.pack("<2d", 1.0, 2.0)
    out.append(raw_tensor.SerializeToString())
    empty = ms_event(52, 2.0)
    empty.summary.value.add(tag="nothing")
    empty.summary.value.add(tag="loss/2", scalar_value=9.0)
    out.append(empty.SerializeToString())
    explain = ms_event(53, 2.0)
    explain.explain.sample_id = 3
    out.append(explain.SerializeToString())
    out.append(ms_event(54, 2.0).SerializeToString())  # no summary at all
    out.append(
        raw_event(
            2.0,
            55,
            [
                _len_field(1, b"\xff\xfebytes-tag") + _key(3, 5) + struct.pack("<f", 1.0),
                _len_field(1, b"loss/3") + _key(3, 5) + struct.pack("<f", 2.0),
            ],
        )
    )
    out.append(raw_event(2.0, 56, [_key(3, 5) + struct.pack("<f", 3.0)]))  # no tag
    out.append(
        raw_event(2.0, 57, [_len_field(1, b"loss/4") + _key(3, 5) + struct.pack("<f", 4.0) * 1])
        + _key(2, 0)
        + varint(-9)  # step after the summary: it still applies
    )
    out.append(
        raw_event(
            2.0,
            58,
            [_len_field(1, b"loss/5") + (_key(3, 5) + struct.pack("<f", 5.0)) * 2],  # last wins
        )
    )
    out.append(
        raw_event(2.0, 59, [_len_field(1, b"loss/6") + _key(3, 5) + struct.pack("<f", 6.0)])
        + _key(15, 0)
        + varint(1)  # unknown field
    )
    out.append(raw_event(2.0, 60, [_len_field(1, b"loss/7") + _key(3, 5) + b"\x00\x00"]))
    out.append(b"\x09" + struct.pack("<d", 3.0) + b"\x10\x80\x80")  # truncated varint
    return out


# --------------------------------------------------------------- TensorBoard payloads


def tb_event(step: int, wall: float) -> tensorboard_pb2.Event:
    return tensorboard_pb2.Event(step=step, wall_time=wall)


def tf2_scalar(tag: str, value: float, dtype: int = 1, content: bool = False):
    v = tensorboard_pb2.Summary.Value(tag=tag)
    v.metadata.plugin_data.plugin_name = "scalars"
    v.tensor.dtype = dtype
    fmt = "<f" if dtype == 1 else "<d"
    if content:
        v.tensor.tensor_content = struct.pack(fmt, value)
    elif dtype == 1:
        v.tensor.float_val.append(value)
    elif dtype == 2:
        v.tensor.double_val.append(value)
    else:
        v.tensor.int_val.append(int(value))
    return v


def tb_payloads(steps: int = 300, tags: int = 40, seed: int = 1) -> list[bytes]:
    rng = np.random.default_rng(seed)
    out = [tensorboard_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString()]
    out.append(tensorboard_pb2.Event(wall_time=1.0, graph_def=b"\x0a\x00").SerializeToString())
    specials = [float("nan"), float("inf"), -float("inf"), -0.0]
    for step in range(-5, steps):
        event = tb_event(step, 100.0 + step)
        kind = step % 13
        tag = f"scalars/{step % tags}"
        value = specials[step % 4] if step % 17 == 0 else float(rng.normal())
        if kind == 0:
            event.summary.value.append(tf2_scalar(tag, value))
        elif kind == 1:
            event.summary.value.append(tf2_scalar(tag, value, dtype=2, content=step % 2 == 0))
        elif kind == 2:
            event.summary.value.append(tf2_scalar(tag, value, dtype=3))  # via protobuf
        elif kind == 3:
            histo = event.summary.value.add(tag="hist").histo
            histo.bucket_limit.extend(np.linspace(0, 1, 30).tolist())
            histo.bucket.extend(range(30))
        elif kind == 4:
            image = event.summary.value.add(tag="img").image
            image.encoded_image_string = b"png" * 20
        elif kind == 5:
            for k in range(4):  # several values in one event
                event.summary.value.add(tag=f"multi/{k}", simple_value=value + k)
        elif kind == 6:
            v = event.summary.value.add(tag="text", simple_value=value)
            v.metadata.plugin_data.plugin_name = "text"
            v.metadata.display_name = "shown"
        elif kind == 7:
            v = event.summary.value.add(tag="strings")
            v.tensor.dtype = 7
            v.tensor.string_val.append(b"x")
        elif kind == 8:
            event.summary.value.add(node_name=f"node/{step % 3}", simple_value=value)
        elif kind == 9:
            v = event.summary.value.add(tag="hist2")
            v.metadata.plugin_data.plugin_name = "histograms"
            v.tensor.dtype = 2
            v.tensor.tensor_shape.dim.add(size=2)
            v.tensor.tensor_shape.dim.add(size=3)
            v.tensor.double_val.extend([0, 1, 2, 1, 2, 3])
        else:
            event.summary.value.add(tag=tag, simple_value=value)
        out.append(event.SerializeToString())
    # Hand-built oddities.
    out.append(_key(1, 1) + struct.pack("<d", 5.0) + _len_field(6, b"\x08\x01"))  # log message
    out.append(raw_event(5.0, 1, [_len_field(1, b"bad\xed\xa0\x80") + _key(2, 5) + b"\0\0\0\0"]))
    out.append(raw_event(5.0, 2, [_len_field(1, "ünï/çødé".encode()) + _key(2, 5) + b"\0" * 4]))
    out.append(raw_event(5.0, 3, [_len_field(1, b"scalars/1") + _key(2, 5) + b"\0\0\x80\x3f"]))
    wrong_meta = tf2_scalar("scalars/2", 3.0)
    wrong_meta.metadata.plugin_data.plugin_name = "scalarz"
    event = tb_event(4, 5.0)
    event.summary.value.append(wrong_meta)
    out.append(event.SerializeToString())
    shaped = tf2_scalar("scalars/3", 3.0)
    shaped.tensor.tensor_shape.dim.add(size=1)
    event = tb_event(5, 5.0)
    event.summary.value.append(shaped)
    out.append(event.SerializeToString())
    two = tf2_scalar("scalars/4", 3.0)
    two.tensor.float_val.append(4.0)  # PayloadError
    event = tb_event(6, 5.0)
    event.summary.value.append(two)
    out.append(event.SerializeToString())
    return out


# ------------------------------------------------------------------------------ tests


def test_crc_matches_crc32c() -> None:
    import crc32c
    import numba

    @numba.njit
    def crc(buf: np.ndarray, n: int, table: np.ndarray) -> int:
        return fastscan._crc32c(fastscan._address(buf), 0, n, fastscan._address(table))

    rng = random.Random(5)
    for n in [*range(40), 1000, 4097]:
        data = bytes(rng.randrange(256) for _ in range(n))
        buf = np.frombuffer(data + bytes(16), dtype=np.uint8)
        assert crc(buf, n, fastscan._CRC_TABLE) == crc32c.crc32c(data)


def test_golden_files(golden_root: Path) -> None:
    found = 0
    for path in sorted(golden_root.glob("*/*")):
        kind = reader_module.sniff_kind(path)
        found += len(assert_same(path, kind))
    assert found


def test_golden_runs_through_read_scalars(golden_root: Path) -> None:
    for run in sorted(p for p in golden_root.iterdir() if p.is_dir()):
        expected = read_scalars(run, engine="python")
        got = read_scalars(run, engine="numba")
        assert got.stats == expected.stats
        assert list(got) == list(expected)
        for tag in expected:
            for want, have in zip(expected[tag], got[tag], strict=True):
                np.testing.assert_array_equal(have, want)


@pytest.fixture(scope="module")
def ms_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(
        tmp_path_factory.mktemp("ms") / "events.out.events.summary.1.0.h_MS", ms_payloads()
    )


@pytest.fixture(scope="module")
def tb_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("tb") / "events.out.tfevents.1.h", tb_payloads())


def test_generated_mindspore(ms_file: Path) -> None:
    got = assert_same(ms_file, "summary")
    assert len(got) > 20
    assert all(isinstance(tag, str) for tag in got)
    assert "loss/3" not in got, "a record with a tag that is not UTF-8 is skipped whole"


def test_generated_tensorboard(tb_file: Path) -> None:
    got = assert_same(tb_file, "tensorboard")
    assert len(got) > 40
    assert "ünï/çødé" in got


def test_lineage_file(golden_root: Path, tmp_path: Path) -> None:
    for path in golden_root.glob("*/*_lineage"):
        assert assert_same(path, "lineage") == {}
    bad = write(tmp_path / "x_lineage", [b"\x0a\x05abc", b"\x08\x01"])
    assert_same(bad, "lineage")


@pytest.mark.parametrize("chunk", [16, 100, 997, 4096])
def test_chunk_boundaries(
    ms_file: Path, tb_file: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fastscan, "CHUNK_SIZE", chunk)
    assert_same(ms_file, "summary")
    assert_same(tb_file, "tensorboard")


def test_records_larger_than_a_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastscan, "CHUNK_SIZE", 256)
    payloads = []
    for step in range(20):
        event = ms_event(step, float(step))
        event.summary.value.add(tag="loss", scalar_value=step / 3)
        hist = event.summary.value.add(tag="w").histogram
        for i in range(50 * (step % 4)):
            hist.buckets.add(left=i, width=1.0, count=i)
        payloads.append(event.SerializeToString())
    assert_same(write(tmp_path / "big.summary.1", payloads), "summary")


def test_many_tags_and_points_grow_the_tables(tmp_path: Path) -> None:
    payloads = []
    for step in range(3000):
        event = tb_event(step, step * 0.5)
        for k in range(3):
            event.summary.value.add(tag=f"tag/{(step * 7 + k) % 1500}", simple_value=step + k)
        payloads.append(event.SerializeToString())
    payloads.insert(1234, tensorboard_pb2.Event(file_version="x").SerializeToString())
    for step in range(0, 3000, 10):  # same tags decoded by protobuf, merged in file order
        event = tb_event(step, 0.0)
        event.summary.value.append(tf2_scalar(f"tag/{step % 1500}", 1.5, dtype=3))
        payloads.insert(step, event.SerializeToString())
    got = assert_same(write(tmp_path / "events.out.tfevents.2.h", payloads), "tensorboard")
    assert len(got) == 1500


def test_utf8_tags_match_protobuf(tmp_path: Path) -> None:
    rng = random.Random(3)
    pieces = [
        b"a", b"\xc2\x80", b"\xc1\xbf", b"\xe0\x9f\xbf", b"\xe0\xa0\x80", b"\xed\x9f\xbf",
        b"\xed\xa0\x80", b"\xef\xbf\xbf", b"\xf0\x8f\xbf\xbf", b"\xf0\x90\x80\x80",
        b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\x80", b"\xe2\x82",
        b"\xff", b"\x00",
    ]  # fmt: skip
    tags = [b"".join(rng.choices(pieces, k=rng.randrange(1, 4))) for _ in range(150)]
    for kind, name in (("tensorboard", "e.tfevents.3"), ("summary", "e.summary.3")):
        field = 2 if kind == "tensorboard" else 3
        payloads = [
            raw_event(1.0, i, [_len_field(1, tag) + _key(field, 5) + struct.pack("<f", i)])
            for i, tag in enumerate(tags)
        ]
        assert_same(write(tmp_path / name, payloads), kind)


def _mutations(data: bytes, rng: random.Random) -> list[bytes]:
    """Truncated and byte-flipped copies, aimed at each part of the records."""
    starts = []
    pos = 0
    while pos + 12 <= len(data):
        starts.append(pos)
        pos += 16 + int.from_bytes(data[pos : pos + 8], "little")
    out = [data[:cut] for cut in rng.sample(range(len(data)), 25)]
    for _ in range(60):
        start = rng.choice(starts)
        length = int.from_bytes(data[start : start + 8], "little")
        where = rng.choice(
            [
                start + rng.randrange(8),  # length
                start + 8 + rng.randrange(4),  # length CRC
                start + 12 + rng.randrange(max(length, 1)),  # payload
                start + 12 + length + rng.randrange(4),  # payload CRC
            ]
        )
        where = min(where, len(data) - 1)
        if 2 <= where < 8:  # the reference reader would try to allocate a huge first length
            continue
        mutated = bytearray(data)
        mutated[where] ^= 1 << rng.randrange(8)
        out.append(bytes(mutated))
    # Payload edits with correct CRCs: the protobuf inside is damaged, the framing is not.
    for _ in range(40):
        start = rng.choice(starts)
        length = int.from_bytes(data[start : start + 8], "little")
        payload = bytearray(data[start + 12 : start + 12 + length])
        if payload:
            payload[rng.randrange(len(payload))] = rng.randrange(256)
        out.append(data[:start] + encode_record(bytes(payload)) + data[start + 16 + length :])
    return out


@pytest.mark.parametrize("kind", ["summary", "tensorboard"])
def test_damaged_files(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payloads = ms_payloads(steps=12, seed=4) if kind == "summary" else tb_payloads(steps=40)
    data = b"".join(encode_record(p) for p in payloads)
    rng = random.Random(kind)
    path = tmp_path / "damaged"
    for i, mutated in enumerate(_mutations(data, rng)):
        monkeypatch.setattr(fastscan, "CHUNK_SIZE", 64 if i % 3 == 0 else 1 << 20)
        path.write_bytes(mutated)
        assert_same(path, kind)


def test_garbage_is_not_an_event_file(tmp_path: Path) -> None:
    rng = random.Random(9)
    path = tmp_path / "garbage"
    for size in (12, 13, 100, 5000):
        # A small first length, so the reference reader does not try to allocate it.
        path.write_bytes(b"\x40" + bytes(7) + bytes(rng.randrange(256) for _ in range(size - 8)))
        assert_same(path, "tensorboard")
        with pytest.raises(NotAnEventFileError):
            fastscan.scan_file_scalars(path, "summary", ReadStats())
    for data in (b"", b"abc", b"x" * 11):  # shorter than a header: torn tail, no error
        path.write_bytes(data)
        assert_same(path, "summary")


def test_garbage_then_records(tmp_path: Path) -> None:
    records = b"".join(encode_record(p) for p in tb_payloads(steps=20))
    path = tmp_path / "events.out.tfevents.4.h"
    garbage = b"\x10" + bytes(7) + bytes(range(1, 83))  # small first length (see above)
    path.write_bytes(garbage + records + records[:-7])
    stats = ReadStats()
    fastscan.scan_file_scalars(path, "tensorboard", stats)
    assert stats.skipped_bytes == 90
    assert stats.torn_tail_bytes > 0
    assert_same(path, "tensorboard")


def test_import_sumlens_does_not_import_numba(tmp_path: Path) -> None:
    code = (
        "import sys, sumlens, sumlens.io\n"
        "assert 'numba' not in sys.modules\n"
        "import sumlens.io._fastscan as f, numba\n"
        "print(numba.config.CACHE_DIR)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == str(tmp_path / "sumlens" / "numba")
