"""Damaged files: random truncations and byte flips fed to every reader.

For each case the expected outcome is worked out from the record layout of the undamaged
file and the rules of :mod:`sumlens.io.framing`: a record with no damaged byte inside it
is intact and must come back; a damaged payload or payload CRC costs that record (counted
in ``corrupt_records``); a damaged length or length CRC makes the scan move on byte by byte
to the next intact header (counted in ``skipped_bytes``); whatever follows the last
complete record is ``torn_tail_bytes``. The readers must agree with that model exactly,
and raise nothing but :class:`NotAnEventFileError` (and only when no record was found).

The second half (``test_structure_fuzz``) changes records at the protobuf level instead
(field values, lengths, dims, dtypes, repeated fields, random bytes inside payloads) and
frames them again with valid CRCs: whatever the decoders return must be what protobuf's
own parse of the mutant holds, and every reader and engine must agree on it.
"""

from __future__ import annotations

import random
import shutil
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from google.protobuf.message import DecodeError
from helpers.wire import tb_tensor_value, varint

import sumlens.io.reader as reader_module
from sumlens._proto import (
    lineage_pb2,
    summary_pb2,
    tensorboard_graph_pb2,
    tensorboard_pb2,
    tensorboard_plugins_pb2,
)
from sumlens.io import (
    Audio,
    Event,
    Histogram,
    Image,
    NotAnEventFileError,
    ReadStats,
    RecordFile,
    Text,
    encode_record,
    iter_events,
    read_scalars,
)
from sumlens.io.decode import DECODERS, PayloadError
from sumlens.io.framing import HEADER_SIZE, scan_all
from sumlens.io.naming import file_kind
from sumlens.io.tb_graph import graph_from_graph_def

GOLDEN_FILES = {
    "all_plugins_ms": "all_plugins/events.out.events.summary.1795304162.0.vm_MS",  # graph
    "collector_lineage": "collector/events.out.events.summary.1795304165.0.vm_lineage",
    "collector_eval_lineage": "collector/events.out.events.summary.1795304168.0.vm_lineage",
    "landscape_ms": "landscape/events.out.events.summary.1795304177.0.vm_MS",
}
FUZZ_FILES = [*GOLDEN_FILES, "tensorboard"]
TB_NAME = "events.out.tfevents.1795300000.fuzzhost"

FAST_CASES = 1000  # per file; five files
SLOW_CASES = 3000
SMALL_CHUNK_CASES = 150  # per file and chunk size


# ----------------------------------------------------------------------------- inputs


@pytest.fixture(scope="session")
def tensorboard_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TensorBoard file written by torch's SummaryWriter (scalars, histograms, images, text,
    audio and PR curves)."""
    from torch.utils.tensorboard import SummaryWriter

    log_dir = tmp_path_factory.mktemp("tb_fuzz")
    rng = np.random.default_rng(7)
    with SummaryWriter(str(log_dir), filename_suffix="") as writer:
        for step in range(12):
            wall = 1795300000.0 + step
            writer.add_scalar("loss", 1.0 / (step + 1), step, walltime=wall)
            writer.add_scalar("lr", 0.1 * 0.9**step, step, walltime=wall)
            if step % 3 == 0:
                writer.add_histogram("w", rng.standard_normal(50), step, walltime=wall)
                writer.add_image("img", rng.random((3, 4, 4)), step, walltime=wall)
                writer.add_text("note", f"step {step}", step, walltime=wall)
                clip = np.sin(np.arange(64) * (step + 1) / 5)
                writer.add_audio("clip", clip, step, sample_rate=800, walltime=wall)
                labels, scores = rng.integers(0, 2, 20), rng.random(20)
                writer.add_pr_curve("pr", labels, scores, step, num_thresholds=5, walltime=wall)
    (written,) = log_dir.iterdir()
    path = log_dir / TB_NAME
    written.rename(path)
    return path


@pytest.fixture(scope="session")
def fuzz_sources(golden_dir: Path, tensorboard_file: Path) -> dict[str, Path]:
    sources = {key: golden_dir / name for key, name in GOLDEN_FILES.items()}
    sources["tensorboard"] = tensorboard_file
    return sources


# ----------------------------------------------------------------------------- the model


def value_key(value: object) -> object:
    """A comparable, hashable stand-in for an event value."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, Histogram):
        return (
            "histogram",
            value.left.tobytes(),
            value.width.tobytes(),
            value.counts.tobytes(),
            repr((value.min, value.max, value.sum, value.count)),
            (value.nan_count, value.pos_inf_count, value.neg_inf_count),
        )
    if isinstance(value, Image):
        return ("image", value.encoded, value.height, value.width, value.colorspace)
    if hasattr(value, "SerializeToString"):
        return ("proto", type(value).__name__, value.SerializeToString(deterministic=True))
    if isinstance(value, list):
        return ("list", tuple(value))
    return ("plain", repr(value))


def event_key(event: Event) -> tuple:
    return (event.step, repr(event.wall_time), event.plugin, event.tag, value_key(event.value))


@dataclass
class Layout:
    """The undamaged file: its bytes, record spans and what each record decodes to."""

    name: str
    data: bytes
    spans: list[tuple[int, int]]
    events: list[list[tuple]]
    plugins: list[dict[str, int]]


def layout_of(path: Path) -> Layout:
    data = path.read_bytes()
    stats = ReadStats()
    records, stop = scan_all(data, 0, len(data), stats)
    assert stop == len(data)
    assert not stats.damaged
    decode = DECODERS[file_kind(path.name)]
    spans, events, plugins = [], [], []
    for offset, payload, length in records:
        spans.append((offset, payload + length + 4))
        record_stats = ReadStats()
        decoded = decode(data[payload : payload + length], path.name, record_stats)
        events.append([event_key(e) for e in decoded])
        plugins.append(record_stats.skipped_plugins)
    assert spans[-1][1] == len(data)
    return Layout(path.name, data, spans, events, plugins)


@dataclass
class Expected:
    good: list[int] = field(default_factory=list)
    corrupt: int = 0
    skipped: int = 0
    torn: int = 0
    end: int = 0

    @property
    def found_nothing(self) -> bool:
        return not self.good and not self.corrupt


def expected_outcome(spans: list[tuple[int, int]], damaged: set[int], cut: int) -> Expected:
    """What a reader must report for the file cut at ``cut`` with ``damaged`` bytes changed."""
    out = Expected()

    def header_intact(index: int) -> bool:
        start = spans[index][0]
        return start + HEADER_SIZE <= cut and not any(
            start <= p < start + HEADER_SIZE for p in damaged
        )

    pos, index = 0, 0
    while True:
        if cut - pos < HEADER_SIZE:
            out.torn = cut - pos
            break
        if header_intact(index):
            start, end = spans[index]
            if end > cut:
                out.torn = cut - start
                pos = start
                break
            if any(start + HEADER_SIZE <= p < end for p in damaged):
                out.corrupt += 1
            else:
                out.good.append(index)
            pos, index = end, index + 1
            continue
        following = (j for j in range(index + 1, len(spans)) if header_intact(j))
        nxt = next(following, None)
        if nxt is None:
            # No header left: every position up to the last 11 bytes is passed over.
            new_pos = max(pos + 1, cut - (HEADER_SIZE - 1))
            out.skipped += new_pos - pos
            pos = new_pos
            out.torn = cut - pos
            break
        out.skipped += spans[nxt][0] - pos
        pos, index = spans[nxt][0], nxt
    out.end = pos
    return out


# ----------------------------------------------------------------------------- damage


@dataclass
class Case:
    description: str
    data: bytes
    damaged: set[int]
    cut: int


def apply(original: bytes, changes: dict[int, int], cut: int | None, description: str) -> Case:
    buf = bytearray(original)
    for pos, new in changes.items():
        buf[pos] = new
    cut = len(original) if cut is None else cut
    damaged = {p for p, new in changes.items() if new != original[p] and p < cut}
    return Case(description, bytes(buf[:cut]), damaged, cut)


def xor_flip(rng: random.Random, original: bytes, pos: int) -> int:
    mask = 1 << rng.randrange(8) if rng.random() < 0.5 else rng.randrange(1, 256)
    return original[pos] ^ mask


def region(layout: Layout, rng: random.Random, kind: str) -> range:
    start, end = layout.spans[rng.randrange(len(layout.spans))]
    return {
        "length": range(start, start + 8),
        "length_crc": range(start + 8, start + 12),
        "payload": range(start + 12, end - 4),
        "payload_crc": range(end - 4, end),
        "record": range(start, end),
    }[kind]


def random_case(layout: Layout, rng: random.Random) -> Case:
    original = layout.data
    size = len(original)
    kind = rng.choice(
        [
            "truncate",
            "truncate_at_boundary",
            "length",
            "length_crc",
            "payload",
            "payload_crc",
            "multi",
            "burst",
            "two_records",
            "truncate_and_flip",
        ]
    )
    changes: dict[int, int] = {}
    cut = None
    if kind == "truncate":
        cut = rng.randrange(size)
    elif kind == "truncate_at_boundary":
        start, end = layout.spans[rng.randrange(len(layout.spans))]
        cut = max(0, min(size, rng.choice([start, start + 1, start + 11, start + 12, end - 1])))
    elif kind in ("length", "length_crc", "payload", "payload_crc"):
        where = region(layout, rng, kind)
        if not where:  # an empty payload
            where = region(layout, rng, "record")
        pos = rng.choice(where)
        changes[pos] = xor_flip(rng, original, pos)
    elif kind == "multi":
        for pos in rng.sample(range(size), min(size, rng.randint(2, 6))):
            changes[pos] = xor_flip(rng, original, pos)
    elif kind == "burst":
        length = rng.randint(2, 64)
        start = rng.randrange(size)
        for pos in range(start, min(size, start + length)):
            changes[pos] = rng.randrange(256)
    elif kind == "two_records":
        for sub in rng.sample(["length", "length_crc", "payload", "payload_crc"], 2):
            where = region(layout, rng, sub) or region(layout, rng, "record")
            pos = rng.choice(where)
            changes[pos] = xor_flip(rng, original, pos)
    else:  # truncate_and_flip
        cut = rng.randrange(1, size)
        pos = rng.randrange(cut)
        changes[pos] = xor_flip(rng, original, pos)
    return apply(original, changes, cut, f"{kind}: changes={sorted(changes.items())} cut={cut}")


def random_cases(layout: Layout, seed: int, count: int) -> Iterable[Case]:
    rng = random.Random(f"{layout.name}:{seed}")
    for _ in range(count):
        yield random_case(layout, rng)


def exhaustive_cases(layout: Layout, seed: int, limit: int = 3000) -> Iterable[Case]:
    """Every truncation point and a flip of every byte.

    Files larger than ``limit`` bytes are walked with a stride, from a random start.
    """
    rng = random.Random(f"{layout.name}:exhaustive:{seed}")
    original = layout.data
    stride = max(1, -(-len(original) // limit))
    for cut in range(rng.randrange(stride), len(original), stride):
        yield apply(original, {}, cut, f"truncate at {cut}")
    for pos in range(rng.randrange(stride), len(original), stride):
        new = xor_flip(rng, original, pos)
        yield apply(original, {pos: new}, None, f"flip byte {pos} -> {new:#04x}")


# ----------------------------------------------------------------------------- checking


def expected_stats(layout: Layout, want: Expected) -> ReadStats:
    stats = ReadStats(
        records=len(want.good),
        corrupt_records=want.corrupt,
        skipped_bytes=want.skipped,
        torn_tail_bytes=want.torn,
    )
    for index in want.good:
        for name, count in layout.plugins[index].items():
            stats.skip_plugin(name, count)
    return stats


def expected_scalars(layout: Layout, want: Expected) -> dict[str, tuple[list, list, list]]:
    columns: dict[str, tuple[list, list, list]] = {}
    for index in want.good:
        for step, wall, plugin, tag, value in layout.events[index]:
            if plugin == "scalar":
                steps, walls, values = columns.setdefault(tag, ([], [], []))
                steps.append(step)
                walls.append(wall)
                values.append(value[1])
    return columns


def check_case(layout: Layout, case: Case, path: Path, engines: list[str]) -> None:
    path.write_bytes(case.data)
    want = expected_outcome(layout.spans, case.damaged, case.cut)
    stats_want = expected_stats(layout, want)
    framing_want = ReadStats(
        records=len(want.good),
        corrupt_records=want.corrupt,
        skipped_bytes=want.skipped,
        torn_tail_bytes=want.torn,
    )
    context = f"{layout.name} [{case.description}] damaged={sorted(case.damaged)}"
    if any(start <= p < end <= case.cut for p in case.damaged for start, end in layout.spans):
        # Damage inside a complete record must cost that record (a torn one is unseen).
        assert want.corrupt or want.skipped, context

    # 1. framing only
    record_file = RecordFile(path)
    try:
        payload_count = sum(1 for _ in record_file.read_payloads())
    except NotAnEventFileError:
        assert want.found_nothing, f"NotAnEventFileError although records exist: {context}"
    else:
        assert payload_count == len(want.good), context
        assert record_file.stats == framing_want, context
        assert record_file.offset == want.end, context

    # 2. iter_events
    stream = iter_events(path)
    try:
        got = [event_key(event) for event in stream]
    except NotAnEventFileError:
        assert want.found_nothing, f"NotAnEventFileError although records exist: {context}"
    else:
        assert got == [key for index in want.good for key in layout.events[index]], context
        assert stream.stats == stats_want, context
        assert stream.stats.damaged == bool(want.corrupt or want.skipped), context

    # 3. read_scalars, each engine
    scalars_want = expected_scalars(layout, want)
    for engine in engines:
        try:
            scalars = read_scalars(path, engine=engine)
        except NotAnEventFileError:
            assert want.found_nothing, f"{engine}: NotAnEventFileError: {context}"
            continue
        assert set(scalars) == set(scalars_want), f"{engine}: {context}"
        for tag, (steps, walls, values) in scalars_want.items():
            got_steps, got_walls, got_values = scalars[tag]
            assert got_steps.tolist() == steps, f"{engine} {tag}: {context}"
            assert [repr(w) for w in got_walls.tolist()] == walls, f"{engine} {tag}: {context}"
            assert [repr(v) for v in got_values.tolist()] == values, f"{engine} {tag}: {context}"
        assert scalars.stats == stats_want, f"{engine}: {context}"


def run_cases(tmp_path: Path, cases: Iterable[Case], layout: Layout, engines: list[str]) -> int:
    target = tmp_path / layout.name
    count = 0
    for case in cases:
        check_case(layout, case, target, engines)
        count += 1
    return count


# ----------------------------------------------------------------------------- tests


def test_model_on_undamaged_files(fuzz_sources: dict[str, Path]) -> None:
    """The fuzz inputs are whole, have several records, and read back fully undamaged."""
    for key, source in fuzz_sources.items():
        layout = layout_of(source)
        want = expected_outcome(layout.spans, set(), len(layout.data))
        assert want.good == list(range(len(layout.spans))), key
        assert (want.corrupt, want.skipped, want.torn) == (0, 0, 0)
        assert len(layout.spans) >= (1 if key == "collector_eval_lineage" else 2), key
    tb = layout_of(fuzz_sources["tensorboard"])
    plugins = [key[2] for events in tb.events for key in events]
    assert [plugins.count(name) for name in ("text", "audio", "pr_curve")] == [4, 4, 4]
    assert not any(tb.plugins)


@pytest.mark.parametrize("key", FUZZ_FILES)
def test_fuzz(
    key: str, fuzz_sources: dict[str, Path], tmp_path: Path, scalar_engines: list[str]
) -> None:
    layout = layout_of(fuzz_sources[key])
    count = run_cases(tmp_path, random_cases(layout, 0, FAST_CASES), layout, scalar_engines)
    assert count == FAST_CASES


@pytest.mark.slow
@pytest.mark.parametrize("key", FUZZ_FILES)
def test_fuzz_slow(
    key: str, fuzz_sources: dict[str, Path], tmp_path: Path, scalar_engines: list[str]
) -> None:
    layout = layout_of(fuzz_sources[key])
    run_cases(tmp_path, random_cases(layout, 1, SLOW_CASES), layout, scalar_engines)
    run_cases(tmp_path, exhaustive_cases(layout, 1), layout, scalar_engines)


@pytest.mark.parametrize("chunk", [12, 13, 64, 256])
@pytest.mark.parametrize("key", FUZZ_FILES)
def test_fuzz_small_chunks(
    key: str,
    chunk: int,
    fuzz_sources: dict[str, Path],
    tmp_path: Path,
    scalar_engines: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Small read chunks put chunk boundaries inside headers, payloads and resyncs."""
    monkeypatch.setattr(reader_module, "CHUNK_SIZE", chunk)
    layout = layout_of(fuzz_sources[key])
    run_cases(
        tmp_path, random_cases(layout, 100 + chunk, SMALL_CHUNK_CASES), layout, scalar_engines
    )


@pytest.mark.parametrize("key", FUZZ_FILES)
def test_every_cut_at_and_around_record_boundaries(
    key: str, fuzz_sources: dict[str, Path], tmp_path: Path, scalar_engines: list[str]
) -> None:
    layout = layout_of(fuzz_sources[key])
    cuts = sorted(
        {
            c
            for start, end in layout.spans
            for c in (start, start + 1, start + 7, start + 8, start + 11, start + 12, end - 1)
            if 0 <= c < len(layout.data)
        }
    )
    cases = (apply(layout.data, {}, cut, f"truncate at {cut}") for cut in cuts)
    run_cases(tmp_path, cases, layout, scalar_engines)


def test_single_record_file_with_damaged_header_is_not_an_event_file(
    fuzz_sources: dict[str, Path], tmp_path: Path, scalar_engines: list[str]
) -> None:
    """The one record of the eval lineage file lost: nothing found at all."""
    source = fuzz_sources["collector_eval_lineage"]
    data = bytearray(source.read_bytes())
    data[9] ^= 0x40  # inside the length CRC
    path = tmp_path / source.name
    path.write_bytes(bytes(data))
    with pytest.raises(NotAnEventFileError):
        list(iter_events(path))
    for engine in scalar_engines:
        with pytest.raises(NotAnEventFileError):
            read_scalars(path, engine=engine)


def test_damage_to_one_file_of_a_run_keeps_the_other_files(
    golden_dir: Path, tmp_path: Path, scalar_engines: list[str]
) -> None:
    """Reading a run directory: damage in one file costs only the damaged records."""
    run = tmp_path / "collector"
    shutil.copytree(golden_dir / "collector", run)
    names = sorted(p.name for p in run.iterdir())
    layouts = {name: layout_of(run / name) for name in names}
    rng = random.Random(5)
    engines = scalar_engines
    for _ in range(60):
        victim = rng.choice([n for n in names if len(layouts[n].spans) > 1])
        layout = layouts[victim]
        case = random_case(layout, rng)
        for name in names:
            (run / name).write_bytes(case.data if name == victim else layouts[name].data)
        per_file = {
            name: expected_outcome(layouts[name].spans, case.damaged, case.cut)
            if name == victim
            else expected_outcome(layouts[name].spans, set(), len(layouts[name].data))
            for name in names
        }
        context = f"{victim} [{case.description}]"
        stream = iter_events(run)
        got = [event_key(e) for e in stream]
        want_events = [
            key
            for name in names
            for index in per_file[name].good
            for key in layouts[name].events[index]
        ]
        assert got == want_events, context
        want_stats = ReadStats()
        for name in names:
            want_stats.merge(expected_stats(layouts[name], per_file[name]))
            if per_file[name].found_nothing and per_file[name].end > 0:
                # No record found at all: the file is listed as unreadable, reading goes on.
                want_stats.unreadable_files.append(str(run / name))
        assert stream.stats == want_stats, context
        assert stream.stats.damaged == bool(
            want_stats.corrupt_records or want_stats.skipped_bytes
        ), context
        for engine in engines:
            scalars = read_scalars(run, engine=engine)
            assert scalars.stats == want_stats, f"{engine}: {context}"


# ----------------------------------------------------------------------------- regressions


@pytest.mark.parametrize("key", FUZZ_FILES)
def test_damaged_high_length_byte_of_first_record(
    key: str, fuzz_sources: dict[str, Path], tmp_path: Path, scalar_engines: list[str]
) -> None:
    layout = layout_of(fuzz_sources[key])
    engines = scalar_engines
    for pos, mask in ((7, 0x01), (7, 0x80), (6, 0x10), (5, 0x01)):
        case = apply(
            layout.data, {pos: layout.data[pos] ^ mask}, None, f"flip byte {pos} ^ {mask:#x}"
        )
        check_case(layout, case, tmp_path / layout.name, engines)


def test_resync_across_a_chunk_boundary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files larger than CHUNK_SIZE (16 MiB) hit this; a small chunk size shows it on 1 KiB."""
    monkeypatch.setattr(reader_module, "CHUNK_SIZE", 256)
    payloads = [b"\xff" * 300 for _ in range(4)]
    data = bytearray(b"".join(encode_record(p) for p in payloads))
    data[316 + 9] ^= 0x01  # the length CRC of record 1: its length is intact
    path = tmp_path / "events.out.events.summary.1.0.h_MS"
    path.write_bytes(bytes(data))
    record_file = RecordFile(path)
    assert list(record_file.read_payloads()) == [payloads[0], payloads[2], payloads[3]]
    assert record_file.stats == ReadStats(records=3, skipped_bytes=316)


def test_run_directory_with_a_wholly_damaged_file(
    golden_dir: Path, tmp_path: Path, scalar_engines: list[str]
) -> None:
    run = tmp_path / "collector"
    shutil.copytree(golden_dir / "collector", run)
    train_lineage = run / Path(GOLDEN_FILES["collector_lineage"]).name
    # Damage the first lineage file's every header, so that no record of it can be found.
    data = bytearray(train_lineage.read_bytes())
    for offset, _, _ in scan_all(bytes(data), 0, len(data), ReadStats())[0]:
        data[offset + 9] ^= 0x01
    train_lineage.write_bytes(bytes(data))
    stream = iter_events(run)
    plugins = [event.plugin for event in stream]
    assert "eval_lineage" in plugins  # in the file after the damaged one
    assert plugins.count("scalar") == 6
    assert stream.stats.damaged
    assert stream.stats.unreadable_files == [str(train_lineage)]
    for engine in scalar_engines:
        scalars = read_scalars(run, engine=engine)
        assert scalars["loss/auto"][0].tolist() == [1, 2, 2, 3, 4, 4]
        assert scalars.stats.unreadable_files == [str(train_lineage)]
        assert scalars.stats.damaged
    # A single file with no record found is still an error of its own.
    with pytest.raises(NotAnEventFileError):
        list(iter_events(train_lineage))


def test_version_event_payload_is_what_the_model_decodes(fuzz_sources: dict[str, Path]) -> None:
    """Sanity check of the layout helper: record 0 of a summary file is the version event."""
    layout = layout_of(fuzz_sources["all_plugins_ms"])
    start, end = layout.spans[0]
    event = summary_pb2.Event.FromString(layout.data[start + HEADER_SIZE : end - 4])
    assert event.version == "MindSpore.Event:1"
    assert layout.events[0] == []
    with pytest.raises(PayloadError):
        DECODERS["summary"](b"\xff\xff\xff", "x", ReadStats())


# ----------------------------------------------------------------------------- wire-level mutants
#
# The damage above is caught by the CRCs. Here each mutant is a record whose protobuf was
# changed field by field and then framed again with valid CRCs, so that only the decoders
# stand between it and what the readers return.

STRUCTURE_SOURCES = {
    "all_plugins_ms": GOLDEN_FILES["all_plugins_ms"],
    "landscape_ms": GOLDEN_FILES["landscape_ms"],
    "all_plugins_lineage": "all_plugins/events.out.events.summary.1795304162.0.vm_lineage",
    "collector_lineage": GOLDEN_FILES["collector_lineage"],
    "ms_typed": None,
    "tensorboard": None,
    "tf2": None,
}
STRUCTURE_MUTANTS = 1000  # per source: 7000 in all
MS_TYPED_NAME = "events.out.events.summary.1795300002.0.fuzzhost_MS"
TF2_NAME = "events.out.tfevents.1795300001.fuzzhost"
PROTOS = {
    "summary": summary_pb2.Event,
    "lineage": lineage_pb2.LineageEvent,
    "tensorboard": tensorboard_pb2.Event,
}
TB_NUMPY = {
    1: "<f4", 2: "<f8", 3: "<i4", 4: "u1", 5: "<i2", 6: "i1", 9: "<i8", 10: "?", 17: "<u2",
    19: "<f2", 22: "<u4", 23: "<u8",
}  # fmt: skip
"""TensorFlow's numeric DataType numbers and the numpy type of their values."""

VARINTS = [
    0, 1, 2, 3, 4, 7, 8, 10, 11, 12, 13, 19, 23, 47, 48, 127, 128, 255, 65535, 65536, 70000,
    2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**40, 2**53, 2**62, 2**63 - 1, 2**63, 2**64 - 1,
    2**64 - 2, 2**64 - 2**40,
]  # fmt: skip
DOUBLES = [
    float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e308, -1e308, 2.0**63, 2.0**64,
    1.5, -1.0, 5e-324, 3.0,
]  # fmt: skip
FLOATS = [
    float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 3.4e38, -3.4e38, 300.0, 65536.0,
    -1.0, 1e-45, 0.5,
]  # fmt: skip


def ms_typed_payloads() -> list[bytes]:
    """A MindSpore summary file with tensors of every dtype, in each typed field and ``raw_data``.

    Only even steps hold a ``raw_data`` tensor (the numba engine leaves those to protobuf).
    """
    raw = [(12, [2], "<f8"), (11, [3], "<f4"), (2, [2, 2], "i1"), (10, [1], "<f2")]
    out = [summary_pb2.Event(wall_time=1.0, version="MindSpore.Event:1").SerializeToString()]
    for step in range(1, 9):
        event = summary_pb2.Event(step=step, wall_time=1795300000.0 + step)
        values = event.summary.value
        values.add(tag="loss", scalar_value=1.0 / step)
        values.add(tag="acc", scalar_value=step / 10)
        typed = [  # MindSpore itself puts every dtype's values in float_data
            (11, [2, 3], "float_data", [0.5 * k for k in range(6)]),
            (4, [3], "float_data", [-step, 0, step]),
            (2, [2], "float_data", [-128, 127]),
            (10, [2], "float_data", [1.5, -2.0]),
            (6, [1, 2], "float_data", [0, 255]),
            (1, [2], "float_data", [1.0, 0.0]),
            (4, [3], "int32_data", [-step, 0, step]),
            (12, [1, 2], "double_data", [1e300, -0.0]),
            (5, [2], "int64_data", [2**40, -1]),
            (9, [1], "uint64_data", [2**64 - 1]),
            (11, [0, 3], "float_data", []),
            (12, [2], "float_data", [0.25, 1e30]),
        ]
        for data_type, dims, name, data in typed[step - 1 :: 8]:
            tensor = values.add(tag=f"t/{name}").tensor
            tensor.data_type = data_type
            tensor.dims.extend(dims)
            getattr(tensor, name).extend(data)
        if step % 2 == 0:
            data_type, dims, numpy_type = raw[step // 2 - 1]
            tensor = values.add(tag="t/raw").tensor
            tensor.data_type = data_type
            tensor.dims.extend(dims)
            tensor.raw_data = np.arange(np.prod(dims), dtype=numpy_type).tobytes()
        hist = values.add(tag="w").histogram
        for k in range(3):
            hist.buckets.add(left=k, width=1.0, count=k + step)
        hist.min, hist.max, hist.sum, hist.count = 0.0, 3.0, 4.5, 3 * step + 3
        image = values.add(tag="img").image
        image.height, image.width, image.colorspace = 1, 1, 3
        image.encoded_image = b"png"
        out.append(event.SerializeToString())
    return out


def tf2_payloads() -> list[bytes]:
    """A TensorBoard file in TF2's style: values as tensors with plugin metadata, and more."""
    rng = np.random.default_rng(11)

    out = [tensorboard_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString()]
    for step in range(6):
        event = tensorboard_pb2.Event(step=step, wall_time=1795300000.0 + step)
        values = event.summary.value
        values.append(tb_tensor_value("loss", [], 1, "scalars", float_val=[1.0 / (step + 1)]))
        values.append(
            tb_tensor_value(
                "lr", [], 2, "scalars", tensor_content=struct.pack("<d", 0.1 * 0.9**step)
            )
        )
        if step % 2 == 0:
            table = np.stack([np.arange(4.0), np.arange(1.0, 5.0), rng.integers(0, 9, 4)], 1)
            values.append(
                tb_tensor_value("w", [4, 3], 2, "histograms", tensor_content=table.tobytes())
            )
            values.append(tb_tensor_value("b", [1, 3], 2, "histograms", double_val=[0.0, 1.0, 5.0]))
            values.append(
                tb_tensor_value("img", [4], 7, "images", string_val=[b"3", b"2", b"png1", b"p2"])
            )
            values.append(tb_tensor_value("t", [2, 3], 1, "", float_val=rng.random(6).tolist()))
            values.append(tb_tensor_value("fill", [4, 4], 1, "", float_val=[0.5]))
        else:
            halves = np.frombuffer(np.array([1.5, -2.0], "<f2").tobytes(), "<u2")
            values.append(tb_tensor_value("h", [2], 19, "tensor", half_val=halves.tolist()))
            values.append(tb_tensor_value("i", [3], 9, "", int64_val=[-1, 0, 2**40]))
            values.append(tb_tensor_value("u", [1], 23, "", uint64_val=[2**64 - 1]))
            values.append(tb_tensor_value("z", [2], 10, "", bool_val=[True, False]))
            values.append(tb_tensor_value("note", [], 7, "text", string_val=[b"step"]))
            histo = values.add(tag="old_hist").histo
            histo.bucket_limit.extend([0.0, 1.0, 2.0])
            histo.bucket.extend([1.0, 2.0, 3.0])
            histo.min, histo.max, histo.num, histo.sum = -1.0, 2.0, 6.0, 5.0
            values.add(node_name="node", simple_value=float(step))
        out.append(event.SerializeToString())
    return out


@pytest.fixture(scope="session")
def structure_sources(
    golden_dir: Path, tensorboard_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    sources = {key: golden_dir / name for key, name in STRUCTURE_SOURCES.items() if name}
    sources["tensorboard"] = tensorboard_file
    directory = tmp_path_factory.mktemp("structure_fuzz")
    for key, name, payloads in (
        ("ms_typed", MS_TYPED_NAME, ms_typed_payloads()),
        ("tf2", TF2_NAME, tf2_payloads()),
    ):
        sources[key] = directory / name
        sources[key].write_bytes(b"".join(encode_record(p) for p in payloads))
    return sources


@dataclass(eq=False)
class WireField:
    """One field of a protobuf message as it sits on the wire.

    ``value``: an int (varint), the 8 or 4 bytes of a fixed field, or the bytes of a
    length-delimited field, parsed into fields where they form a message.
    """

    number: int
    wire: int
    value: int | bytes | list[WireField]


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("bad varint")
        byte = data[pos]
        result |= (byte & 0x7F) << shift
        pos += 1
        shift += 7
        if byte < 0x80:
            return result, pos


def parse_wire(data: bytes) -> list[WireField]:
    """The fields of ``data``; raises ValueError when it is not a well-formed message.

    A length-delimited field is parsed further when its bytes are a message that encodes
    back to the same bytes (a string or packed numbers seldom are).
    """
    fields = []
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ValueError("field number 0")
        if wire == 0:
            value, pos = read_varint(data, pos)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, pos = data[pos : pos + size], pos + size
        elif wire == 2:
            size, pos = read_varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
            try:
                nested = parse_wire(value)
            except ValueError:
                nested = []
            if nested and encode_fields(nested, {}) == value:
                value = nested
        else:
            raise ValueError(f"wire type {wire}")
        if pos > len(data):
            raise ValueError("truncated")
        fields.append(WireField(number, wire, value))
    return fields


def node_bytes(node: WireField, replace: dict[int, bytes]) -> bytes:
    """The value of a field as it follows its key (a length-delimited one without its length)."""
    if node.wire == 0:
        return varint(node.value)
    if isinstance(node.value, list):
        return encode_fields(node.value, replace)
    return node.value


def encode_fields(fields: list[WireField], replace: dict[int, bytes]) -> bytes:
    """Serialise ``fields``; a field whose ``id`` is in ``replace`` is written as those bytes."""
    out = []
    for node in fields:
        if id(node) in replace:
            out.append(replace[id(node)])
            continue
        data = node_bytes(node, replace)
        length = varint(len(data)) if node.wire == 2 else b""
        out.append(varint(node.number << 3 | node.wire) + length + data)
    return b"".join(out)


def fields_by_path(
    fields: list[WireField], path: tuple[int, ...] = (), out: dict | None = None
) -> dict[tuple[int, ...], list[WireField]]:
    """Every field of a message tree, grouped by the field numbers leading to it."""
    out = {} if out is None else out
    for node in fields:
        out.setdefault((*path, node.number), []).append(node)
        if isinstance(node.value, list):
            fields_by_path(node.value, (*path, node.number), out)
    return out


def packed_varints(data: bytes) -> list[int]:
    """``data`` read as packed varints ([] when it is not)."""
    numbers = []
    pos = 0
    try:
        while pos < len(data):
            number, pos = read_varint(data, pos)
            numbers.append(number)
    except ValueError:
        return []
    return numbers


def packed_element(data: bytes, rng: random.Random) -> bytes:
    """``data`` as packed numbers (varints, floats or doubles, as fit) with one changed."""
    numbers = packed_varints(data)
    sizes = [size for size in (4, 8) if data and len(data) % size == 0] + [0] * bool(numbers)
    if not sizes:
        return data + varint(rng.choice(VARINTS))
    size = rng.choice(sizes)
    if size == 0:
        numbers[rng.randrange(len(numbers))] = rng.choice(VARINTS)
        return b"".join(map(varint, numbers))
    at = rng.randrange(len(data) // size) * size
    if size == 4:
        return data[:at] + struct.pack("<f", rng.choice(FLOATS)) + data[at + 4 :]
    return data[:at] + struct.pack("<d", rng.choice(DOUBLES)) + data[at + 8 :]


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """Random bytes inside a length-delimited field: cut, grown, overwritten or emptied."""
    how = rng.choice(["cut", "grow", "overwrite", "flip", "by_element", "empty"])
    if how == "cut" and data:
        return data[: rng.randrange(len(data))]
    if how == "grow":
        return data + rng.randbytes(rng.randint(1, 9))
    if how == "overwrite" and data:
        at = rng.randrange(len(data))
        return data[:at] + rng.randbytes(rng.randint(1, 8)) + data[at + 8 :]
    if how == "flip" and data:
        at = rng.randrange(len(data))
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]
    if how == "by_element":  # one element fewer or more in a packed field
        size = rng.choice([1, 2, 4, 8])
        return data[:-size] if rng.random() < 0.5 else data + rng.randbytes(size)
    return b""


def mutant_node(node: WireField, rng: random.Random) -> tuple[bytes, str]:
    """What to write instead of ``node`` (key included), and the name of the change."""
    key = varint(node.number << 3 | node.wire)
    data = node_bytes(node, {})
    encoded = key + (varint(len(data)) if node.wire == 2 else b"") + data
    ops = ["duplicate", "repeat", "delete", "renumber", "rewire", "insert"]
    if node.wire != 2:
        ops += ["value"] * 6
    elif isinstance(node.value, list):
        ops += ["bytes", "wrong_length"]
    else:  # bytes, a string or packed numbers
        ops += ["element"] * 6 + ["bytes"] * 3 + ["wrong_length"]
    op = rng.choice(ops)
    if op == "element":
        new = packed_element(data, rng)
        return key + varint(len(new)) + new, op
    if op == "value" and node.wire == 0:
        new = rng.choice([*VARINTS, node.value + 1, node.value - 1, rng.getrandbits(64)])
        return key + varint(new), op
    if op == "value":
        if rng.random() < 0.3:
            return key + rng.randbytes(len(data)), op
        if node.wire == 1:
            return key + struct.pack("<d", rng.choice(DOUBLES)), op
        return key + struct.pack("<f", rng.choice(FLOATS)), op
    if op == "bytes":
        new = mutate_bytes(data, rng)
        return key + varint(len(new)) + new, op
    if op == "wrong_length":  # the length disagrees with the bytes that follow
        wrong = max(0, len(data) + rng.choice([-3, -1, 1, 2, 9, 2**31]))
        return key + varint(wrong) + data, op
    if op == "duplicate":
        return encoded * 2, op
    if op == "repeat":
        return encoded * rng.randint(3, 40), op
    if op == "delete":
        return b"", op
    if op == "renumber":
        return varint(rng.randint(1, 16) << 3 | node.wire) + encoded[len(key) :], op
    if op == "rewire":
        wire = rng.choice([w for w in range(6) if w != node.wire])
        return varint(node.number << 3 | wire) + encoded[len(key) :], op
    number = rng.randint(1, 16) << 3
    extra = rng.choice(
        [
            varint(number) + varint(rng.choice(VARINTS)),
            varint(number | 1) + struct.pack("<d", rng.choice(DOUBLES)),
            varint(number | 5) + struct.pack("<f", rng.choice(FLOATS)),
            varint(number | 2) + varint(3) + rng.randbytes(3),
        ]
    )
    return encoded + extra, "insert"


def mutate_payload(
    payload: bytes, fields: list[WireField], rng: random.Random
) -> tuple[bytes, str]:
    """One mutant of a record's payload (``fields``: its parse), and what was done to it.

    The field to change is drawn path first (a tensor's dims as often as a histogram's
    many buckets), then one field of that path.
    """
    paths = fields_by_path(fields)
    if not paths or rng.random() < 0.05:
        cut = rng.randrange(len(payload) + 1)
        return payload[:cut] + rng.randbytes(rng.randrange(4)), f"payload cut at {cut}"
    path = rng.choice(sorted(paths))
    node = rng.choice(paths[path])
    new, op = mutant_node(node, rng)
    where = ".".join(map(str, path))
    return encode_fields(fields, {id(node): new}), f"{op} on field {where}/{node.wire}"


# ----------------------------------------------------------------------------- the oracle


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal in shape and values (NaN equal to NaN)."""
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f" and b.dtype.kind == "f":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b))


def same_floats(a: Iterable[float], b: Iterable[float]) -> bool:
    return [repr(float(x)) for x in a] == [repr(float(y)) for y in b]


def cast(values: np.ndarray, dtype: np.dtype | str) -> np.ndarray:
    with np.errstate(all="ignore"):
        return values.astype(dtype)


def minus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return a - b


def ms_sources(tensor: summary_pb2.TensorProto, dtype: np.dtype) -> list[np.ndarray]:
    """Every run of values a MindSpore tensor holds, each in its field's own type."""
    sources = [
        np.asarray(tensor.float_data, np.float32),
        np.asarray(tensor.double_data, np.float64),
        np.asarray(tensor.int64_data, np.int64),
        np.asarray(tensor.int32_data, np.int32),
        np.asarray(tensor.uint64_data, np.uint64),
    ]
    if len(tensor.raw_data) % dtype.itemsize == 0:
        sources.append(np.frombuffer(tensor.raw_data, dtype.newbyteorder("<")))
    return sources


def tb_sources(tensor: tensorboard_pb2.TensorProto) -> list[np.ndarray]:
    """Every run of values a TensorBoard tensor holds, each in its field's own type."""
    sources = [
        np.asarray(tensor.float_val, np.float32),
        np.asarray(tensor.double_val, np.float64),
        np.asarray(tensor.int_val, np.int32),
        np.asarray(tensor.int64_val, np.int64),
        np.asarray(tensor.bool_val, np.bool_),
        np.asarray(tensor.uint32_val, np.uint32),
        np.asarray(tensor.uint64_val, np.uint64),
    ]
    halves = np.asarray(tensor.half_val, np.int64)
    if ((halves >= 0) & (halves < 1 << 16)).all():
        sources.append(halves.astype(np.uint16).view(np.float16))
    numpy_type = TB_NUMPY.get(tensor.dtype)
    if numpy_type and len(tensor.tensor_content) % np.dtype(numpy_type).itemsize == 0:
        sources.append(np.frombuffer(tensor.tensor_content, numpy_type))
    return sources


def array_from(array: np.ndarray, dims: list[int], sources: list[np.ndarray]) -> bool:
    """Whether ``array`` has shape ``dims`` and the values of one source (or one value, filled)."""
    if array.shape != tuple(dims):
        return False
    flat = array.reshape(-1)
    for source in sources:
        values = cast(source, array.dtype)
        if values.size == 1:
            values = np.full(flat.size, values[0])
        if same(values, flat):
            return True
    return not flat.size


def ms_value_gives(event: Event, value: summary_pb2.Summary.Value) -> bool:
    kind = value.WhichOneof("value")
    if event.tag != value.tag:
        return False
    if event.plugin == "scalar":
        return kind == "scalar_value" and same_floats([event.value], [value.scalar_value])
    if event.plugin == "tensor":
        tensor = value.tensor
        sources = ms_sources(tensor, event.value.dtype)
        return kind == "tensor" and array_from(event.value, list(tensor.dims), sources)
    if event.plugin == "histogram":
        hist, got = value.histogram, event.value
        return (
            kind == "histogram"
            and same(got.left, np.array([b.left for b in hist.buckets], np.float64))
            and same(got.width, np.array([b.width for b in hist.buckets], np.float64))
            and got.counts.tolist() == [b.count for b in hist.buckets]
            and same_floats([got.min, got.max, got.sum], [hist.min, hist.max, hist.sum])
            and (got.count, got.nan_count, got.pos_inf_count, got.neg_inf_count)
            == (hist.count, hist.nan_count, hist.pos_inf_count, hist.neg_inf_count)
        )
    if event.plugin == "image":
        img = value.image
        return kind == "image" and event.value == Image(
            img.encoded_image, img.height, img.width, img.colorspace
        )
    return event.plugin == "landscape" and event.value == value.loss_landscape


def tb_targets(value: tensorboard_pb2.Summary.Value) -> list[tuple]:
    """What one TensorBoard value can give: itself, or each picture of an image tensor, or
    each clip of an audio tensor."""
    if value.WhichOneof("value") == "tensor" and value.metadata.plugin_data.plugin_name == "images":
        pictures = len(value.tensor.string_val[2:])
        return [(value, index, pictures) for index in range(pictures)]
    if value.WhichOneof("value") == "tensor" and value.metadata.plugin_data.plugin_name == "audio":
        clips = len(value.tensor.string_val) // 2
        return [(value, index, clips) for index in range(clips)]
    return [(value, 0, 1)]


def tb_histogram_from(got: Histogram, value: tensorboard_pb2.Summary.Value) -> bool:
    if value.WhichOneof("value") == "histo":
        histo = value.histo
        limits = np.asarray(histo.bucket_limit, np.float64)
        return (
            same(got.left[1:], limits[:-1])
            and (
                not limits.size
                or any(same_floats([got.left[0]], [x]) for x in (histo.min, limits[0]))
            )
            and same(got.width, minus(limits, got.left))
            and same(got.counts.astype(np.float64), np.trunc(histo.bucket))
            and same_floats([got.min, got.max, got.sum], [histo.min, histo.max, histo.sum])
            and got.count == int(histo.num)
        )
    dims = [dim.size for dim in value.tensor.tensor_shape.dim]
    if dims != [got.left.size, 3]:
        return False
    for source in tb_sources(value.tensor):
        values = cast(source, np.float64)
        if values.size == 1:
            values = np.full(got.left.size * 3, values[0])
        if values.size != got.left.size * 3:
            continue
        table = values.reshape(-1, 3)
        ends = [table[0, 0], table[-1, 1]] if len(table) else [float("nan")] * 2
        if (
            same(table[:, 0], got.left)
            and same(minus(table[:, 1], table[:, 0]), got.width)
            and same(np.trunc(table[:, 2]), got.counts.astype(np.float64))
            and same_floats([got.min, got.max], ends)
        ):
            return True
    return False


def tb_plugin_gives(event: Event, value: tensorboard_pb2.Summary.Value) -> bool:
    """Whether ``event`` (text, audio, a PR curve or hparams) is what ``value`` holds."""
    kind, got = value.WhichOneof("value"), event.value
    if event.plugin == "hparams":
        content = value.metadata.plugin_data.content
        return got == tensorboard_plugins_pb2.HParamsPluginData.FromString(content)
    if event.plugin == "audio":
        audio = value.audio
        return kind == "audio" and got == Audio(
            audio.encoded_audio_string, audio.sample_rate, audio.num_channels,
            audio.length_frames, audio.content_type or "audio/wav",
        )  # fmt: skip
    dims = [dim.size for dim in value.tensor.tensor_shape.dim]
    if event.plugin == "text":
        cells = tuple(s.decode("utf-8", "replace") for s in value.tensor.string_val)
        return kind == "tensor" and got == Text(cells, tuple(dims))
    return kind == "tensor" and array_from(got, dims, tb_sources(value.tensor))


def tb_value_gives(event: Event, target: tuple) -> bool:
    value, index, pictures = target
    kind = value.WhichOneof("value")
    tag = value.tag or value.node_name
    got = event.value
    if event.plugin == "image" and kind == "tensor":
        strings = value.tensor.string_val
        return (
            event.tag == (tag if pictures == 1 else f"{tag}/{index}")
            and got.encoded == strings[2 + index]
            and (got.width, got.height) == (int(strings[0]), int(strings[1]))
        )
    if event.plugin == "audio" and kind == "tensor":
        strings = value.tensor.string_val
        return (
            event.tag == (tag if pictures == 1 else f"{tag}/{index}")
            and got.encoded == strings[2 * index]
            and got.label == strings[2 * index + 1].decode("utf-8", "replace")
        )
    if event.tag != tag:
        return False
    if event.plugin in ("text", "audio", "pr_curve", "hparams"):
        return tb_plugin_gives(event, value)
    if event.plugin == "scalar" and kind == "tensor":
        declared = TB_NUMPY.get(value.tensor.dtype, "<f8")
        singles = [cast(s, declared)[0] for s in tb_sources(value.tensor) if s.size == 1]
        return any(same_floats([got], [x]) for x in singles)
    if event.plugin == "scalar":
        return kind == "simple_value" and same_floats([got], [value.simple_value])
    if event.plugin == "image":
        img = value.image
        return kind == "image" and got == Image(
            img.encoded_image_string, img.height, img.width, img.colorspace
        )
    if event.plugin == "tensor":
        dims = [dim.size for dim in value.tensor.tensor_shape.dim]
        return kind == "tensor" and array_from(got, dims, tb_sources(value.tensor))
    return event.plugin == "histogram" and tb_histogram_from(got, value)


def derived_message(kind: str, message: object, what: str) -> object:
    """The message an event of a record's ``what`` holds (a TensorBoard graph converted)."""
    found = getattr(message, what)
    if kind != "tensorboard":  # MindSpore's graph and lineage messages, as they are
        return found
    if what == "graph_def":
        return graph_from_graph_def(found)
    return tensorboard_graph_pb2.RunMetadata.FromString(found.run_metadata)


def check_derivable(kind: str, name: str, payload: bytes, events: list[Event] | None) -> None:
    """Every event decoded from ``payload`` is a value protobuf's own parse of it holds.

    ``events`` is None when the decoder rejected the record; a payload protobuf cannot
    parse must be rejected. Events come in the order of the values they stand for.
    """
    message = PROTOS[kind]()
    try:
        message.ParseFromString(payload)
    except DecodeError:
        assert events is None, "a payload protobuf cannot parse was not rejected"
        return
    if not events:
        return
    for event in events:
        assert event.step == message.step
        assert same_floats([event.wall_time], [message.wall_time])
    what = message.WhichOneof("what")
    if kind == "lineage" or what in ("graph_def", "tagged_run_metadata"):
        assert len(events) == 1
        assert events[0].value == derived_message(kind, message, what)
        if what == "graph_def":
            assert events[0].tag == name
        elif what == "tagged_run_metadata":
            assert events[0].tag == message.tagged_run_metadata.tag
        return
    assert what == "summary"
    if kind == "summary":
        targets, gives = list(message.summary.value), ms_value_gives
    else:
        targets = [t for value in message.summary.value for t in tb_targets(value)]
        gives = tb_value_gives
    at = 0
    for event in events:
        while at < len(targets) and not gives(event, targets[at]):
            at += 1
        assert at < len(targets), f"{event} is not in the record"
        at += 1


def bits_of_events(events: Iterable[Event]) -> dict[str, list[tuple[int, bytes, bytes]]]:
    """Scalar points per tag as (step, wall time bytes, value bytes): equal means bit for bit."""
    out: dict[str, list[tuple[int, bytes, bytes]]] = {}
    for event in events:
        if event.plugin == "scalar":
            point = (event.step, struct.pack("<d", event.wall_time), struct.pack("<d", event.value))
            out.setdefault(event.tag, []).append(point)
    return out


def bits_of_scalars(scalars: dict) -> dict[str, list[tuple[int, bytes, bytes]]]:
    return {
        tag: [
            (step, struct.pack("<d", wall), struct.pack("<d", value))
            for step, wall, value in zip(*(column.tolist() for column in columns), strict=True)
        ]
        for tag, columns in scalars.items()
    }


# ----------------------------------------------------------------------------- tests


def test_structure_fuzz_sources(structure_sources: dict[str, Path]) -> None:
    """The mutants start from files that decode whole, and the wire model re-encodes them."""
    for key, path in structure_sources.items():
        layout = layout_of(path)
        assert len(layout.spans) >= 2, key
        for start, end in layout.spans:
            payload = layout.data[start + HEADER_SIZE : end - 4]
            assert encode_fields(parse_wire(payload), {}) == payload, key


@pytest.mark.parametrize("key", list(STRUCTURE_SOURCES))
def test_structure_fuzz(
    key: str, structure_sources: dict[str, Path], tmp_path: Path, scalar_engines: list[str]
) -> None:
    """Wire-level mutants with valid CRCs: nothing escapes, engines agree, nothing made up.

    Each file is the source file with one to three records replaced by mutants. Each
    mutant's events must be derivable from protobuf's own parse of it (or it is rejected);
    ``iter_events`` on the file must give exactly every record's events in order (the
    original events for records left alone) and count what they skipped and every rejected
    record; ``read_scalars`` with every engine must give its scalars bit for bit and the
    same counts.
    """
    source = structure_sources[key]
    layout = layout_of(source)
    kind = file_kind(source.name)
    decode = DECODERS[kind]
    payloads = [layout.data[start + HEADER_SIZE : end - 4] for start, end in layout.spans]
    trees = [parse_wire(payload) for payload in payloads]
    rng = random.Random(f"structure:{key}")
    path = tmp_path / source.name
    made = 0
    while made < STRUCTURE_MUTANTS:
        chosen = rng.sample(range(len(payloads)), rng.randint(1, min(3, len(payloads))))
        records, want_events, notes = [], [], []
        want_stats = ReadStats()
        for index, payload in enumerate(payloads):
            if index not in chosen:
                records.append(payload)
                want_events += layout.events[index]
                want_stats.merge(ReadStats(records=1, skipped_plugins=dict(layout.plugins[index])))
                continue
            mutant, note = mutate_payload(payload, trees[index], rng)
            notes.append(f"record {index}: {note}")
            records.append(mutant)
            made += 1
            record_stats = ReadStats()
            try:
                events = decode(mutant, source.name, record_stats)
            except PayloadError:
                events = None
            check_derivable(kind, source.name, mutant, events)
            if events is None:
                want_stats.corrupt_records += 1
            else:
                want_events += [event_key(event) for event in events]
                record_stats.records = 1
                want_stats.merge(record_stats)
        path.write_bytes(b"".join(encode_record(record) for record in records))
        context = f"{key} [{'; '.join(notes)}]"
        stream = iter_events(path)
        got = list(stream)
        assert [event_key(event) for event in got] == want_events, context
        assert stream.stats == want_stats, context
        want_scalars = bits_of_events(got)
        for engine in scalar_engines:
            scalars = read_scalars(path, engine=engine)
            assert list(scalars) == list(want_scalars), f"{engine}: {context}"
            assert bits_of_scalars(scalars) == want_scalars, f"{engine}: {context}"
            assert scalars.stats == want_stats, f"{engine}: {context}"
