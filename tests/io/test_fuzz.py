"""Damaged files: random truncations and byte flips fed to every reader.

For each case the expected outcome is worked out from the record layout of the undamaged
file and the rules of :mod:`sumlens.io.framing`: a record with no damaged byte inside it
is intact and must come back; a damaged payload or payload CRC costs that record (counted
in ``corrupt_records``); a damaged length or length CRC makes the scan move on byte by byte
to the next intact header (counted in ``skipped_bytes``); whatever follows the last
complete record is ``torn_tail_bytes``. The readers must agree with that model exactly,
and raise nothing but :class:`NotAnEventFileError` (and only when no record was found).
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import sumlens.io.reader as reader_module
from sumlens._proto import summary_pb2
from sumlens.io import (
    Event,
    Histogram,
    Image,
    NotAnEventFileError,
    ReadStats,
    RecordFile,
    iter_events,
    read_scalars,
)
from sumlens.io.decode import DECODERS, PayloadError
from sumlens.io.framing import HEADER_SIZE, scan_all
from sumlens.io.naming import file_kind

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
    """A TensorBoard file written by torch's SummaryWriter (scalars, histograms, images, text)."""
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
    assert sum(p.get("text", 0) for p in tb.plugins) == 4


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
    from sumlens.io import encode_record

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
