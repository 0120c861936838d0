"""Crafted records with valid CRCs: each is skipped and counted, and reading goes on.

Every case is one record whose framing is intact but whose payload asks the reader for
something it cannot honour: a negative or overflowing shape, a byte buffer that is not a
whole number of elements, a 16 GiB filled tensor in a 58-byte record, values the declared
dtype cannot hold, histograms of odd shapes. Put in a file between two good scalar
records, and that file in a run directory beside a good file, every reader
(``iter_events``, ``read_scalars`` with each engine) must return the good scalars, count
exactly one corrupt record and raise nothing.

Reads that could allocate without bound run in a child process whose address space is
limited (see :data:`ADDRESS_SPACE_LIMIT`), so that an allocation beyond the record's
bounds fails there, visibly, instead of taking the test machine's memory.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.wire import tb_tensor_value, varint

from sumlens._proto import summary_pb2, tensorboard_pb2
from sumlens.io import (
    ReadStats,
    RecordChangedError,
    encode_record,
    iter_events,
    read_events_at,
    read_file_scalars,
)
from sumlens.io.decode import PayloadError

ADDRESS_SPACE_LIMIT = 512 * 2**20
"""Address space of the child that reads the big-allocation cases.

Measured on x86-64 Linux (Python 3.11, numpy 2.4, numba 0.68): importing sumlens, numba
and llvmlite and reading with every engine peaks at about 380 MiB of address space with
numba's kernel cache warm, and 430 MiB when numba has to compile them. That holds with
BLAS single-threaded (:data:`CHILD_ENV`): OpenBLAS reserves address space for a thread
per core, which alone takes a 2-core machine past 512 MiB on a cold cache. 512 MiB leaves
room for reading, and is 1/32 of the 16 GiB the filled-tensor case asked for before it was
bounded.
"""
CHILD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

MS_NAMES = ("events.out.events.summary.1.0.h_MS", "events.out.events.summary.2.0.h_MS")
TB_NAMES = ("events.out.tfevents.1.h", "events.out.tfevents.2.h")
GOOD_STEPS = {"file": [1, 2], "run": [1, 2, 3, 4]}


# ----------------------------------------------------------------------------- records


def scalar_record(kind: str, step: int) -> bytes:
    """A good record: scalar ``loss`` = 1 / 2**step at ``step``."""
    if kind == "summary":
        event = summary_pb2.Event(step=step, wall_time=float(step))
        event.summary.value.add(tag="loss", scalar_value=0.5**step)
    else:
        event = tensorboard_pb2.Event(step=step, wall_time=float(step))
        event.summary.value.add(tag="loss", simple_value=0.5**step)
    return event.SerializeToString()


def ms_tensor(dims: list[int], data_type: int = 11, **fields: object) -> bytes:
    """A MindSpore event holding one tensor value with these dims, dtype and data fields."""
    event = summary_pb2.Event(step=9, wall_time=9.0)
    tensor = event.summary.value.add(tag="t").tensor
    tensor.dims.extend(dims)
    tensor.data_type = data_type
    for name, values in fields.items():
        if name == "raw_data":
            tensor.raw_data = values
        else:
            getattr(tensor, name).extend(values)
    return event.SerializeToString()


def tb_value(value: tensorboard_pb2.Summary.Value) -> bytes:
    event = tensorboard_pb2.Event(step=9, wall_time=9.0)
    event.summary.value.append(value)
    return event.SerializeToString()


def tb_tensor(dims: list[int], dtype: int = 1, plugin: str = "", **fields: object) -> bytes:
    """A TensorBoard event holding one tensor value (``plugin`` names its metadata)."""
    return tb_value(tb_tensor_value("t", dims, dtype, plugin, **fields))


def tb_histo(bucket_limit: list[float], bucket: list[float], num: float) -> bytes:
    value = tensorboard_pb2.Summary.Value(tag="h")
    value.histo.bucket_limit.extend(bucket_limit)
    value.histo.bucket.extend(bucket)
    value.histo.num = num
    return tb_value(value)


def ms_rejected_after_a_skip() -> bytes:
    """An empty value (counted as skipped when read) before a tensor short of values."""
    event = summary_pb2.Event(step=9, wall_time=9.0)
    event.summary.value.add(tag="nothing")
    tensor = event.summary.value.add(tag="t").tensor
    tensor.dims.extend([2, 2])
    tensor.float_data.extend([1.0, 2.0, 3.0])
    return event.SerializeToString()


def tb_rejected_after_a_skip() -> bytes:
    """A mesh value (counted as skipped when read) before a scalar tensor of two values."""
    event = tensorboard_pb2.Event(step=9, wall_time=9.0)
    event.summary.value.append(tb_tensor_value("t", [1], 1, "mesh", float_val=[1.0]))
    event.summary.value.append(tb_tensor_value("t", [], 1, "scalars", float_val=[1.0, 2.0]))
    return event.SerializeToString()


def tb_fills_beyond_the_record_budget() -> bytes:
    """Two filled float32 tensors of 1 MiB each: together past the record's 1 MiB."""
    event = tensorboard_pb2.Event(step=9, wall_time=9.0)
    for _ in range(2):
        event.summary.value.append(tb_tensor_value("t", [1 << 18], float_val=[1.0]))
    return event.SerializeToString()


def ms_image(height: int, width: int) -> bytes:
    """A MindSpore event holding one image of this declared size."""
    event = summary_pb2.Event(step=9, wall_time=9.0)
    image = event.summary.value.add(tag="img").image
    image.height, image.width, image.colorspace, image.encoded_image = height, width, 3, b"png"
    return event.SerializeToString()


def ms_image_wrapping_to_negative() -> bytes:
    """An image whose width varint is 2**32 - 5: protobuf reads the int32 as -5."""
    image = b"\x08\x01\x10" + varint(2**32 - 5) + b"\x18\x03\x22\x03png"
    value = b"\x0a\x03img" + b"\x22" + varint(len(image)) + image
    summary = b"\x0a" + varint(len(value)) + value
    head = summary_pb2.Event(step=9, wall_time=9.0).SerializeToString()
    return head + b"\x2a" + varint(len(summary)) + summary


def ms_histogram(counts: list[int], **totals: int) -> bytes:
    """A MindSpore event holding one histogram of these bucket counts and totals."""
    event = summary_pb2.Event(step=9, wall_time=9.0)
    histogram = event.summary.value.add(tag="h").histogram
    for left, count in enumerate(counts):
        histogram.buckets.add(left=float(left), width=1.0, count=count)
    histogram.count = sum(counts)
    histogram.min, histogram.max, histogram.sum = 0.0, float(len(counts)), 1.0
    for name, total in totals.items():
        setattr(histogram, name, total)
    return event.SerializeToString()


def tb_image(height: int, width: int) -> bytes:
    value = tensorboard_pb2.Summary.Value(tag="img")
    value.image.height, value.image.width, value.image.encoded_image_string = height, width, b"x"
    return tb_value(value)


def tb_audio(**fields: float) -> bytes:
    """A TensorBoard ``Summary.Audio`` value with these fields (a clip of ``b"RIFF"``)."""
    value = tensorboard_pb2.Summary.Value(tag="clip")
    value.audio.encoded_audio_string = b"RIFF"
    for name, number in fields.items():
        setattr(value.audio, name, number)
    return tb_value(value)


def tb_hparams(content: bytes) -> bytes:
    """An hparams plugin value whose plugin content is ``content``."""
    value = tensorboard_pb2.Summary.Value(tag="_hparams_/experiment")
    value.metadata.plugin_data.plugin_name = "hparams"
    value.metadata.plugin_data.content = content
    return tb_value(value)


def tb_run_metadata(run_metadata: bytes) -> bytes:
    event = tensorboard_pb2.Event(step=9, wall_time=9.0)
    event.tagged_run_metadata.tag = "step1"
    event.tagged_run_metadata.run_metadata = run_metadata
    return event.SerializeToString()


def tb_graph_def(graph_def: bytes) -> bytes:
    return tensorboard_pb2.Event(step=9, wall_time=9.0, graph_def=graph_def).SerializeToString()


NOT_A_MESSAGE = b"\xff\xff\xff\xff"
"""Bytes no protobuf message parses from: a field key whose varint never ends."""
NAN = float("nan")
CASES: dict[str, tuple[str, Callable[[], bytes]]] = {
    # The cases of the issue, MindSpore and TensorBoard twins.
    "ms_negative_dims": ("summary", lambda: ms_tensor([-1, 0])),
    "ms_dims_overflow_int64": ("summary", lambda: ms_tensor([2**62, 4])),
    "ms_dims_overflow_int64_square": ("summary", lambda: ms_tensor([2**40, 2**40])),
    "ms_raw_data_of_5_bytes": ("summary", lambda: ms_tensor([1], raw_data=b"12345")),
    "ms_empty_with_huge_dims": ("summary", lambda: ms_tensor([0, 2**40, 2**40])),
    "tb_negative_dims": ("tensorboard", lambda: tb_tensor([-1, 0])),
    "tb_dims_overflow_int64": ("tensorboard", lambda: tb_tensor([2**62, 4])),
    "tb_dims_overflow_int64_square": ("tensorboard", lambda: tb_tensor([2**40, 2**40])),
    "tb_empty_with_huge_dims": ("tensorboard", lambda: tb_tensor([0, 2**40, 2**40])),
    "tb_tensor_content_of_5_bytes": (
        "tensorboard",
        lambda: tb_tensor([1], tensor_content=b"12345"),
    ),
    "tb_filled_16_gib": ("tensorboard", lambda: tb_tensor([65536, 65536], float_val=[1.0])),
    # Found beside them.
    "ms_65_dims": ("summary", lambda: ms_tensor([1] * 65, float_data=[1.0])),
    "tb_65_dims": ("tensorboard", lambda: tb_tensor([1] * 65, float_val=[1.0])),
    "ms_nan_as_int32": ("summary", lambda: ms_tensor([1], 4, float_data=[NAN])),
    "ms_300_as_int8": ("summary", lambda: ms_tensor([1], 2, float_data=[300.0])),
    "tb_nan_as_int32": ("tensorboard", lambda: tb_tensor([1], 3, float_val=[NAN])),
    "tb_half_val_beyond_16_bits": ("tensorboard", lambda: tb_tensor([1], 19, half_val=[70000])),
    "tb_fills_beyond_the_record_budget": ("tensorboard", tb_fills_beyond_the_record_budget),
    "tb_histogram_tensor_infinite_count": (
        "tensorboard",
        lambda: tb_tensor([1, 3], 2, "histograms", double_val=[0.0, 1.0, float("inf")]),
    ),
    "tb_histogram_tensor_4_by_0": ("tensorboard", lambda: tb_tensor([4, 0], 2, "histograms")),
    "tb_histo_nan_count": ("tensorboard", lambda: tb_histo([1.0, 2.0], [1.0, 1.0], NAN)),
    "tb_histo_limits_and_counts_differ": (
        "tensorboard",
        lambda: tb_histo([1.0, 2.0, 3.0], [1.0, 1.0], 2.0),
    ),
    "tb_image_width_beyond_int32": (
        "tensorboard",
        lambda: tb_tensor([3], 7, "images", string_val=[b"9" * 4000, b"1", b"png"]),
    ),
    # Counts and sizes that are negative (issue 25: shown as nonsense before).
    "ms_image_negative_width": ("summary", lambda: ms_image(2, -5)),
    "ms_image_negative_height": ("summary", lambda: ms_image(-1, 2)),
    "ms_image_width_wrapping_to_negative": ("summary", ms_image_wrapping_to_negative),
    "ms_histogram_negative_bucket_count": ("summary", lambda: ms_histogram([3, -2, 1])),
    "ms_histogram_negative_count": ("summary", lambda: ms_histogram([1], count=-1)),
    "ms_histogram_negative_nan_count": ("summary", lambda: ms_histogram([1], nan_count=-3)),
    "tb_image_negative_width": ("tensorboard", lambda: tb_image(2, -5)),
    "tb_histo_negative_bucket": ("tensorboard", lambda: tb_histo([1.0, 2.0], [3.0, -1.0], 2.0)),
    "tb_histo_negative_num": ("tensorboard", lambda: tb_histo([1.0, 2.0], [1.0, 1.0], -2.0)),
    "tb_histogram_tensor_negative_count": (
        "tensorboard",
        lambda: tb_tensor([1, 3], 2, "histograms", double_val=[0.0, 1.0, -4.0]),
    ),
    # The TensorBoard plugins of issue 27.
    "tb_text_short_of_its_shape": (
        "tensorboard",
        lambda: tb_tensor([2, 2], 7, "text", string_val=[b"a", b"b", b"c"]),
    ),
    "tb_text_of_floats": ("tensorboard", lambda: tb_tensor([1], 1, "text", float_val=[1.0])),
    "tb_text_of_huge_shape": (
        "tensorboard",
        lambda: tb_tensor([2**40, 2**40], 7, "text", string_val=[b"a"]),
    ),
    "tb_audio_nan_sample_rate": ("tensorboard", lambda: tb_audio(sample_rate=NAN)),
    "tb_audio_negative_frames": ("tensorboard", lambda: tb_audio(length_frames=-8)),
    "tb_audio_negative_channels": ("tensorboard", lambda: tb_audio(num_channels=-1)),
    "tb_audio_tensor_of_3_columns": (
        "tensorboard",
        lambda: tb_tensor([1, 3], 7, "audio", string_val=[b"RIFF", b"a", b"b"]),
    ),
    "tb_audio_tensor_short_of_its_shape": (
        "tensorboard",
        lambda: tb_tensor([2, 2], 7, "audio", string_val=[b"RIFF", b"label"]),
    ),
    "tb_pr_curve_of_5_rows": (
        "tensorboard",
        lambda: tb_tensor([5, 2], 1, "pr_curves", float_val=[0.0] * 10),
    ),
    "tb_pr_curve_of_strings": (
        "tensorboard",
        lambda: tb_tensor([6, 1], 7, "pr_curves", string_val=[b"a"] * 6),
    ),
    "tb_pr_curve_filled_48_gib": (
        "tensorboard",
        lambda: tb_tensor([6, 2**31], 1, "pr_curves", float_val=[1.0]),
    ),
    "tb_hparams_not_a_message": ("tensorboard", lambda: tb_hparams(NOT_A_MESSAGE)),
    "tb_hparams_holding_nothing": ("tensorboard", lambda: tb_hparams(b"")),
    "tb_run_metadata_not_a_message": ("tensorboard", lambda: tb_run_metadata(NOT_A_MESSAGE)),
    "tb_graph_def_not_a_message": ("tensorboard", lambda: tb_graph_def(NOT_A_MESSAGE)),
    "ms_rejected_after_a_skip": ("summary", ms_rejected_after_a_skip),
    "tb_rejected_after_a_skip": ("tensorboard", tb_rejected_after_a_skip),
}
BIG = {
    "ms_dims_overflow_int64",
    "ms_dims_overflow_int64_square",
    "tb_dims_overflow_int64",
    "tb_dims_overflow_int64_square",
    "tb_filled_16_gib",
    "tb_text_of_huge_shape",
    "tb_pr_curve_filled_48_gib",
}
"""Cases whose shapes ask for gigabytes or more (before the fix, numpy's int64 product of
the dims wrapped to 0 for the overflowing ones): read in the limited child."""


FOUND_WHEN_READ_BACK = {
    "ms_nan_as_int32",
    "ms_300_as_int8",
    "tb_nan_as_int32",
    "tb_half_val_beyond_16_bits",
    "tb_histogram_tensor_infinite_count",
    "ms_histogram_negative_bucket_count",
    "tb_histo_negative_bucket",
    "tb_histogram_tensor_negative_count",
}
"""Cases whose damage only the values show: an indexing read (which does not convert
histograms and tensors) lists them; reading one back refuses it. Every other case is
refused by the indexing read itself, which checks shapes, counts and sizes."""


def write_case(kind: str, payload: bytes, root: Path) -> tuple[Path, Path]:
    """The crafted record between two good ones, as a file; and a run of it and a good file."""
    names = MS_NAMES if kind == "summary" else TB_NAMES
    run = root / "run"
    run.mkdir()
    crafted = run / names[0]
    crafted.write_bytes(
        encode_record(scalar_record(kind, 1))
        + encode_record(payload)
        + encode_record(scalar_record(kind, 2))
    )
    good = run / names[1]
    good.write_bytes(encode_record(scalar_record(kind, 3)) + encode_record(scalar_record(kind, 4)))
    return crafted, run


# ----------------------------------------------------------------------------- reading


def read_everything(path: str, engines: list[str]) -> dict:
    """What each reader makes of ``path``, as plain data (it also runs in the child).

    ``{reader: {"events" or "scalars": ..., "stats": ...} or {"error": repr}}``.
    """
    import dataclasses

    from sumlens.io import iter_events, read_scalars

    out: dict = {}
    try:
        stream = iter_events(path)
        events = list(stream)
        scalars = [[e.plugin, e.tag, e.step, e.value] for e in events if e.plugin == "scalar"]
        others = [[e.plugin, e.tag, e.step] for e in events if e.plugin != "scalar"]
        stats = dataclasses.asdict(stream.stats)
        out["iter_events"] = {"events": scalars, "others": others, "stats": stats}
    except Exception as err:
        out["iter_events"] = {"error": repr(err)}
    for engine in engines:
        try:
            scalars = read_scalars(path, engine=engine)
            columns = {tag: [s.tolist(), v.tolist()] for tag, (s, _, v) in scalars.items()}
            stats = dataclasses.asdict(scalars.stats)
            out[engine] = {"scalars": columns, "stats": stats}
        except Exception as err:
            out[engine] = {"error": repr(err)}
    return out


def read_in_child(paths: list[Path], engines: list[str], env: dict[str, str]) -> list[dict]:
    """:func:`read_everything` of each path in a fresh interpreter limited to
    :data:`ADDRESS_SPACE_LIMIT` of address space from its first line on."""
    code = "\n".join(
        [
            "import json, resource, sys",
            "hard = resource.getrlimit(resource.RLIMIT_AS)[1]",
            f"resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE_LIMIT}, hard))",
            inspect.getsource(read_everything),
            f"print(json.dumps([read_everything(p, {engines!r}) for p in sys.argv[1:]]))",
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, paths)],
        env={**os.environ, **CHILD_ENV, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def expect_good_scalars(result: dict, steps: list[int], corrupt: int, context: str) -> None:
    """Every reader returned the good scalars at ``steps`` and counted ``corrupt`` records."""
    stats = {
        "records": len(steps),
        "corrupt_records": corrupt,
        "skipped_bytes": 0,
        "torn_tail_bytes": 0,
        "skipped_plugins": {},
        "unreadable_files": [],
    }
    values = [0.5**step for step in steps]
    events = [["scalar", "loss", step, 0.5**step] for step in steps]
    for reader, got in result.items():
        assert "error" not in got, f"{reader} raised {got.get('error')}: {context}"
        assert got["stats"] == stats, f"{reader}: {context}"
        if reader == "iter_events":
            assert got["events"] == events, f"{reader}: {context}"
            assert got["others"] == [], f"{reader}: {context}"
        else:
            assert got["scalars"] == {"loss": [steps, values]}, f"{reader}: {context}"


# ----------------------------------------------------------------------------- tests


@pytest.mark.parametrize("case", sorted(CASES))
def test_crafted_record_is_skipped_and_counted(
    case: str, tmp_path: Path, scalar_engines: list[str]
) -> None:
    kind, make = CASES[case]
    crafted, run = write_case(kind, make(), tmp_path)
    if case in BIG:
        good = run / (MS_NAMES if kind == "summary" else TB_NAMES)[1]
        results = read_in_child([good, crafted, run], scalar_engines, {})
        # The readers themselves fit in the limit: the numba engine included.
        expect_good_scalars(results[0], [3, 4], 0, f"{case}: the good file alone")
        results = results[1:]
    else:
        results = [read_everything(str(path), scalar_engines) for path in (crafted, run)]
    expect_good_scalars(results[0], GOOD_STEPS["file"], 1, f"{case}: file")
    expect_good_scalars(results[1], GOOD_STEPS["run"], 1, f"{case}: run directory")


@pytest.mark.parametrize("protobuf", ["default", "python"])
@pytest.mark.parametrize("kind", ["summary", "tensorboard"])
def test_a_tag_that_is_not_utf8_costs_its_record(
    kind: str, protobuf: str, tmp_path: Path, scalar_engines: list[str]
) -> None:
    """Whatever protobuf parses it with: the C parser keeps such a MindSpore (proto2) tag
    as bytes and refuses a TensorBoard (proto3) one; the pure-Python parser raises
    UnicodeDecodeError. Either way the record is the only thing lost, and no tag comes
    back as anything but ``str``.
    """
    payload = bytearray(scalar_record(kind, 7))
    at = payload.index(b"loss")
    payload[at : at + 4] = b"\xff\xfe\xfd\xfc"
    crafted, run = write_case(kind, bytes(payload), tmp_path)
    env = {"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"} if protobuf == "python" else {}
    file_result, run_result = read_in_child([crafted, run], scalar_engines, env)
    expect_good_scalars(file_result, GOOD_STEPS["file"], 1, f"{kind}: file")
    expect_good_scalars(run_result, GOOD_STEPS["run"], 1, f"{kind}: run directory")


def test_fill_budget_is_per_record(tmp_path: Path) -> None:
    """A filled tensor of 1 MiB reads from a small record; two of them in one record do not."""
    crafted, _ = write_case("tensorboard", tb_tensor([1 << 18], float_val=[2.5]), tmp_path)
    data = crafted.read_bytes() + encode_record(tb_fills_beyond_the_record_budget())
    crafted.write_bytes(data)
    stream = iter_events(crafted)
    tensors = [event.value for event in stream if event.plugin == "tensor"]
    assert [(t.shape, t.dtype.str, float(t.min()), float(t.max())) for t in tensors] == [
        ((1 << 18,), "<f4", 2.5, 2.5)
    ]
    assert (stream.stats.records, stream.stats.corrupt_records) == (3, 1)


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_indexing_read_refuses_what_it_can_without_values(
    case: str, tmp_path: Path, scalar_engines: list[str]
) -> None:
    """The dashboard indexes values without converting them: the damage it can see
    without the values is counted then (so the run list shows it), the rest when the
    value is read back, as damage (not as a file that changed). Both engines agree."""
    kind, make = CASES[case]
    crafted, _ = write_case(kind, make(), tmp_path)
    for engine in scalar_engines:
        stats = ReadStats()
        handed: list[tuple[str, int, int]] = []
        keep = handed.append
        columns, _ = read_file_scalars(
            crafted,
            kind,
            engine=engine,  # type: ignore[arg-type]
            stats=stats,
            other=lambda event, offset, length, keep=keep: keep((event.tag, offset, length)),
            values=False,
        )
        assert columns["loss"][0].tolist() == GOOD_STEPS["file"], engine
        if case not in FOUND_WHEN_READ_BACK:
            assert (stats.corrupt_records, handed) == (1, []), engine
            continue
        assert stats.corrupt_records == 0 and handed, engine
        for tag, offset, length in handed:
            with pytest.raises(PayloadError) as raised:
                read_events_at(crafted, kind, offset, length, tag)
            assert not isinstance(raised.value, RecordChangedError), engine
