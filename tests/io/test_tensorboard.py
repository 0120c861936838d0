"""Reading TensorBoard event files: written by real writers, and hand-built TF2-style ones."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from sumlens._proto import tensorboard_pb2 as tb
from sumlens.io import Histogram, RecordWriter, iter_events, read_scalars
from sumlens.io.naming import tensorboard_file_name

STEPS = range(5)
WALL0 = 1795300000.0


def scalar_value(step: int) -> float:
    return 1.0 / (step + 1) + 0.25 * step


def writer_class(kind: str):
    if kind == "torch":
        from torch.utils.tensorboard import SummaryWriter

        return SummaryWriter
    from tensorboardX import SummaryWriter

    return SummaryWriter


def make_inputs() -> dict[int, dict[str, np.ndarray]]:
    rng = np.random.default_rng(42)
    return {
        step: {
            "hist": rng.standard_normal(200).astype(np.float32),
            "img": rng.random((3, 6, 10)).astype(np.float32),  # CHW in [0, 1)
        }
        for step in STEPS
    }


@pytest.fixture(scope="module", params=["torch", "tensorboardX"])
def written_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A run written by a real SummaryWriter: scalars, histograms, images and text."""
    kind = request.param
    log_dir = tmp_path_factory.mktemp(f"tb_{kind}")
    inputs = make_inputs()
    writer = writer_class(kind)(str(log_dir))
    for step in STEPS:
        wall = WALL0 + step
        writer.add_scalar("loss", scalar_value(step), step, walltime=wall)
        writer.add_scalar("acc/train", step / 10, step, walltime=wall)
        writer.add_histogram("weights", inputs[step]["hist"], step, walltime=wall)
        writer.add_image("sample", inputs[step]["img"], step, walltime=wall)
        writer.add_text("notes", f"step {step} done", step, walltime=wall)
    writer.close()
    return kind, log_dir, inputs


def read_all(path: Path):
    stream = iter_events(path)
    events = list(stream)
    return events, stream.stats


# ----------------------------------------------------------------------------- real writers


def test_real_writer_file_is_picked_up(written_run) -> None:
    _, log_dir, _ = written_run
    files = list(log_dir.iterdir())
    assert len(files) == 1
    assert "tfevents" in files[0].name
    events_dir, stats_dir = read_all(log_dir)
    events_file, stats_file = read_all(files[0])
    assert [(e.plugin, e.tag, e.step) for e in events_dir] == [
        (e.plugin, e.tag, e.step) for e in events_file
    ]
    assert stats_dir == stats_file


def test_real_writer_events(written_run) -> None:
    _, log_dir, _ = written_run
    events, stats = read_all(log_dir)
    assert Counter((e.plugin, e.tag) for e in events) == Counter(
        {
            ("scalar", "loss"): len(STEPS),
            ("scalar", "acc/train"): len(STEPS),
            ("histogram", "weights"): len(STEPS),
            ("image", "sample"): len(STEPS),
            ("text", "notes/text_summary"): len(STEPS),
        }
    )
    for event in events:
        assert event.wall_time == WALL0 + event.step
    texts = [e.value for e in events if e.plugin == "text"]
    assert [t.cells for t in texts] == [(f"step {step} done",) for step in STEPS]
    assert stats.skipped_plugins == {}
    assert not stats.damaged
    assert stats.torn_tail_bytes == 0
    assert stats.records == 1 + 5 * len(STEPS)  # file_version event + one event per value


def test_real_writer_scalars(written_run) -> None:
    _, log_dir, _ = written_run
    events, _ = read_all(log_dir)
    loss = [e for e in events if e.tag == "loss"]
    assert [e.step for e in loss] == list(STEPS)
    assert [e.value for e in loss] == [float(np.float32(scalar_value(s))) for s in STEPS]
    acc = [e for e in events if e.tag == "acc/train"]
    assert [e.value for e in acc] == [float(np.float32(s / 10)) for s in STEPS]


def test_real_writer_read_scalars(written_run, scalar_engine: str) -> None:
    _, log_dir, _ = written_run
    scalars = read_scalars(log_dir, engine=scalar_engine)
    assert sorted(scalars) == ["acc/train", "loss"]
    steps, walls, values = scalars["loss"]
    assert steps.tolist() == list(STEPS)
    assert walls.tolist() == [WALL0 + s for s in STEPS]
    assert values.tolist() == [float(np.float32(scalar_value(s))) for s in STEPS]
    assert scalars["acc/train"][2].tolist() == [float(np.float32(s / 10)) for s in STEPS]
    assert scalars.stats.skipped_plugins == {}
    assert scalars.stats.records == 1 + 5 * len(STEPS)
    assert not scalars.stats.damaged


def test_real_writer_histograms(written_run) -> None:
    _, log_dir, inputs = written_run
    events, _ = read_all(log_dir)
    histograms = [e for e in events if e.plugin == "histogram"]
    assert [e.step for e in histograms] == list(STEPS)
    for event in histograms:
        values = inputs[event.step]["hist"].astype(np.float64)
        hist = event.value
        assert isinstance(hist, Histogram)
        assert hist.count == values.size
        assert int(hist.counts.sum()) == values.size
        assert hist.min == values.min()
        assert hist.max == values.max()
        assert hist.sum == pytest.approx(values.sum(), rel=1e-9, abs=1e-9)
        assert np.all(hist.width >= 0)
        right = hist.left + hist.width
        assert np.all(np.diff(right) > 0)
        assert hist.left[0] <= hist.min and right[-1] >= hist.max
        # TensorBoard buckets hold the values in (previous limit, limit].
        index = np.searchsorted(right, values, side="left")
        assert np.bincount(index, minlength=len(right)).tolist() == hist.counts.tolist()


def test_real_writer_images(written_run) -> None:
    _, log_dir, inputs = written_run
    events, _ = read_all(log_dir)
    images = [e for e in events if e.plugin == "image"]
    assert [e.step for e in images] == list(STEPS)
    for event in images:
        image = event.value
        assert (image.height, image.width, image.colorspace) == (6, 10, 3)
        with PILImage.open(io.BytesIO(image.encoded)) as picture:
            assert picture.format == "PNG"
            pixels = np.asarray(picture.convert("RGB"))
        want = (inputs[event.step]["img"].transpose(1, 2, 0) * 255).clip(0, 255)
        np.testing.assert_array_equal(pixels, want.astype(np.uint8))


def test_torch_new_style_scalar(tmp_path: Path, scalar_engine: str) -> None:
    """torch's ``new_style=True`` writes a scalars-plugin tensor instead of simple_value."""
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path)) as writer:
        for step in STEPS:
            writer.add_scalar("tensor_loss", scalar_value(step), step, new_style=True)
    events, stats = read_all(tmp_path)
    assert [(e.plugin, e.tag, e.step) for e in events] == [
        ("scalar", "tensor_loss", s) for s in STEPS
    ]
    assert [e.value for e in events] == [float(np.float32(scalar_value(s))) for s in STEPS]
    assert not stats.damaged
    scalars = read_scalars(tmp_path, engine=scalar_engine)
    assert scalars["tensor_loss"][2].tolist() == [e.value for e in events]


# ----------------------------------------------------------------------------- hand-built TF2


def tensor_proto(array: np.ndarray, dtype: int, *, content: bool = True) -> tb.TensorProto:
    proto = tb.TensorProto(dtype=dtype)
    for size in array.shape:
        proto.tensor_shape.dim.add(size=size)
    if content:
        proto.tensor_content = array.astype(array.dtype.newbyteorder("<")).tobytes()
    elif dtype == tb.DT_FLOAT:
        proto.float_val.extend(array.reshape(-1).tolist())
    elif dtype == tb.DT_DOUBLE:
        proto.double_val.extend(array.reshape(-1).tolist())
    return proto


def value_event(step: int, tag: str, plugin: str, tensor: tb.TensorProto) -> bytes:
    event = tb.Event(wall_time=WALL0 + step, step=step)
    value = event.summary.value.add(tag=tag)
    value.metadata.plugin_data.plugin_name = plugin
    value.tensor.CopyFrom(tensor)
    return event.SerializeToString()


def png_bytes(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    PILImage.fromarray(pixels, "RGB").save(out, format="PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def tf2_run(tmp_path_factory: pytest.TempPathFactory):
    log_dir = tmp_path_factory.mktemp("tf2")
    rng = np.random.default_rng(9)
    pictures = [(rng.random((8, 16, 3)) * 255).astype(np.uint8) for _ in range(2)]
    table = np.array([[-1.0, -0.5, 3.0], [-0.5, 0.25, 0.0], [0.25, 2.0, 7.0]])
    generic = np.arange(12, dtype=np.int32).reshape(3, 4)
    path = log_dir / tensorboard_file_name(int(WALL0), host="handmade", suffix=".v2")
    with RecordWriter(path) as writer:
        writer.write(tb.Event(wall_time=WALL0, file_version="brain.Event:2").SerializeToString())
        for step in STEPS:
            loss = np.array(scalar_value(step), dtype=np.float32)
            writer.write(value_event(step, "loss", "scalars", tensor_proto(loss, tb.DT_FLOAT)))
            as_val = tensor_proto(loss.astype(np.float64), tb.DT_DOUBLE, content=False)
            writer.write(value_event(step, "loss_f64", "scalars", as_val))
            writer.write(value_event(step, "hist", "histograms", tensor_proto(table, tb.DT_DOUBLE)))
        images = tb.TensorProto(dtype=tb.DT_STRING)
        images.tensor_shape.dim.add(size=4)
        images.string_val.extend([b"16", b"8", *(png_bytes(p) for p in pictures)])
        writer.write(value_event(0, "pics", "images", images))
        single = tb.TensorProto(dtype=tb.DT_STRING)
        single.tensor_shape.dim.add(size=3)
        single.string_val.extend([b"16", b"8", png_bytes(pictures[1])])
        writer.write(value_event(1, "pic", "images", single))
        writer.write(value_event(0, "grid", "", tensor_proto(generic, tb.DT_INT32)))
        text = tb.TensorProto(dtype=tb.DT_STRING)
        text.string_val.append(b"hello")
        writer.write(value_event(0, "note", "text", text))
    return log_dir, path, pictures, table, generic


def test_tf2_scalars(tf2_run, scalar_engine: str) -> None:
    log_dir, path, *_ = tf2_run
    events, stats = read_all(path)
    for tag in ("loss", "loss_f64"):
        got = [e for e in events if e.plugin == "scalar" and e.tag == tag]
        assert [e.step for e in got] == list(STEPS)
        assert [e.value for e in got] == [float(np.float32(scalar_value(s))) for s in STEPS]
        assert [e.wall_time for e in got] == [WALL0 + s for s in STEPS]
    assert stats.skipped_plugins == {}
    assert not stats.damaged
    scalars = read_scalars(log_dir, engine=scalar_engine)
    assert sorted(scalars) == ["loss", "loss_f64"]
    for tag in ("loss", "loss_f64"):
        steps, walls, values = scalars[tag]
        assert steps.tolist() == list(STEPS)
        assert walls.tolist() == [WALL0 + s for s in STEPS]
        assert values.tolist() == [float(np.float32(scalar_value(s))) for s in STEPS]
    assert scalars.stats == stats


def test_tf2_histograms(tf2_run) -> None:
    _, path, _, table, _ = tf2_run
    events, _ = read_all(path)
    histograms = [e for e in events if e.plugin == "histogram"]
    assert [(e.tag, e.step) for e in histograms] == [("hist", s) for s in STEPS]
    for event in histograms:
        hist = event.value
        assert hist.left.tolist() == table[:, 0].tolist()
        assert hist.width.tolist() == (table[:, 1] - table[:, 0]).tolist()
        assert hist.counts.tolist() == [3, 0, 7]
        assert hist.count == 10
        assert hist.min == -1.0
        assert hist.max == 2.0


def test_tf2_images(tf2_run) -> None:
    _, path, pictures, *_ = tf2_run
    events, _ = read_all(path)
    images = [e for e in events if e.plugin == "image"]
    assert [(e.tag, e.step) for e in images] == [("pics/0", 0), ("pics/1", 0), ("pic", 1)]
    for event, want in zip(images, [pictures[0], pictures[1], pictures[1]], strict=True):
        assert (event.value.height, event.value.width) == (8, 16)
        with PILImage.open(io.BytesIO(event.value.encoded)) as picture:
            np.testing.assert_array_equal(np.asarray(picture), want)


def test_tf2_generic_tensor(tf2_run) -> None:
    _, path, _, _, generic = tf2_run
    events, _ = read_all(path)
    tensors = [e for e in events if e.plugin == "tensor"]
    assert [(e.tag, e.step) for e in tensors] == [("grid", 0)]
    array = tensors[0].value
    assert array.dtype == np.int32
    np.testing.assert_array_equal(array, generic)


def test_tf2_record_counts(tf2_run) -> None:
    log_dir, *_ = tf2_run
    _, stats = read_all(log_dir)
    assert stats.records == 1 + 3 * len(STEPS) + 4
    assert stats.corrupt_records == 0
    assert stats.skipped_bytes == 0
    assert stats.torn_tail_bytes == 0
