"""Every golden file written by real MindSpore reads back with the values MindSpore wrote.

The expected values are recomputed from the recipe in ``tests/data/golden/README.md``
(seeded numpy draws), not copied from the files, and compared exactly where MindSpore
stores them exactly.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from sumlens._proto import summary_pb2
from sumlens.io import Event, Histogram, RecordFile, iter_events, read_scalars
from sumlens.io.decode import ms_tensor_to_array

ALL_PLUGINS_MS = "all_plugins/events.out.events.summary.1795304162.0.vm_MS"
ALL_PLUGINS_LINEAGE = "all_plugins/events.out.events.summary.1795304162.0.vm_lineage"
COLLECTOR_MS = "collector/events.out.events.summary.1795304165.0.vm_MS"
COLLECTOR_TRAIN_LINEAGE = "collector/events.out.events.summary.1795304165.0.vm_lineage"
COLLECTOR_EVAL_LINEAGE = "collector/events.out.events.summary.1795304168.0.vm_lineage"
LANDSCAPE_TRAIN_MS = "landscape/events.out.events.summary.1795304175.0.vm_MS"
LANDSCAPE_LINEAGE = "landscape/events.out.events.summary.1795304175.0.vm_lineage"
LANDSCAPE_MS = "landscape/events.out.events.summary.1795304177.0.vm_MS"

# Good records per file: summary files start with the version event, then the graph.
RECORDS = {
    ALL_PLUGINS_MS: 1 + 1 + 3,
    ALL_PLUGINS_LINEAGE: 3,
    COLLECTOR_MS: 1 + 1 + 6,
    COLLECTOR_TRAIN_LINEAGE: 2,
    COLLECTOR_EVAL_LINEAGE: 1,
    LANDSCAPE_TRAIN_MS: 1 + 1 + 12,
    LANDSCAPE_LINEAGE: 2,
    LANDSCAPE_MS: 1 + 2,
}
RUNS = {
    "all_plugins": [ALL_PLUGINS_MS, ALL_PLUGINS_LINEAGE],
    "collector": [COLLECTOR_MS, COLLECTOR_TRAIN_LINEAGE, COLLECTOR_EVAL_LINEAGE],
    "landscape": [LANDSCAPE_TRAIN_MS, LANDSCAPE_LINEAGE, LANDSCAPE_MS],
}
# SummaryCollector (collect_freq=1, 2 steps per epoch) writes each epoch's last step twice.
COLLECTOR_STEPS = [1, 2, 2, 3, 4, 4]
LANDSCAPE_STEPS = [1, 2, 2, 3, 4, 4, 5, 6, 6, 7, 8, 8]


# ----------------------------------------------------------------------------- helpers


def read_all(path: Path) -> tuple[list[Event], object]:
    stream = iter_events(path)
    events = list(stream)
    return events, stream.stats


def assert_undamaged(stats: object, records: int) -> None:
    assert stats.records == records
    assert stats.corrupt_records == 0
    assert stats.skipped_bytes == 0
    assert stats.torn_tail_bytes == 0
    assert not stats.damaged
    assert stats.skipped_plugins == {}


def ms_bucket_count(n_finite: int) -> int:
    """MindSpore's number of histogram buckets for ``n_finite`` finite values."""
    if n_finite <= 5:
        return 2
    if n_finite <= 10:
        return 3
    if n_finite <= 880:
        return n_finite // 10 + 1
    return 90


def tile_nchw(images: np.ndarray) -> np.ndarray:
    """MindSpore's image canvas: N images side by side, 8 per row, as H x W x 3."""
    n, channels, height, width = images.shape
    if channels == 1:
        images = np.repeat(images, 3, axis=1)
    cols = min(n, 8)
    rows = -(-n // cols)
    canvas = np.zeros((rows * height, cols * width, 3), dtype=images.dtype)
    for index in range(n):
        row, col = divmod(index, cols)
        canvas[row * height : (row + 1) * height, col * width : (col + 1) * width] = images[
            index
        ].transpose(1, 2, 0)
    return canvas


def to_uint8_like_mindspore(canvas: np.ndarray) -> np.ndarray:
    """Values in [0, 1] times 255, truncated to uint8 (the only case the goldens hold)."""
    assert canvas.min() >= 0 and canvas.max() <= 1
    return (canvas * 255).astype(np.uint8)


def png_pixels(encoded: bytes) -> np.ndarray:
    with PILImage.open(io.BytesIO(encoded)) as picture:
        assert picture.format == "PNG"
        assert picture.mode == "RGB"
        return np.asarray(picture)


def all_plugins_expected() -> dict[int, dict[str, object]]:
    """The README recipe of all_plugins, redrawn with numpy."""
    rng = np.random.default_rng(1234)
    expected = {}
    for step in (1, 2, 3):
        img = rng.random((2, 3, 8, 8)).astype(np.float32)
        w = rng.standard_normal(100).astype(np.float32)
        expected[step] = {
            "loss": float(np.float32(1 / step)),
            "img": img,
            "w": w,
            "t": (np.arange(6, dtype=np.float32) * step).reshape(2, 3),
        }
    return expected


def by_step_and_tag(events: list[Event], plugin: str) -> dict[tuple[int, str], Event]:
    found = {}
    for event in events:
        if event.plugin == plugin:
            key = (event.step, event.tag)
            assert key not in found, f"{key} appears twice"
            found[key] = event
    return found


def check_histogram_shape(hist: Histogram) -> None:
    """Invariants of any MindSpore histogram of finite values."""
    finite = hist.count - hist.nan_count - hist.pos_inf_count - hist.neg_inf_count
    assert len(hist.counts) == ms_bucket_count(finite)
    assert len(hist.left) == len(hist.width) == len(hist.counts)
    assert int(hist.counts.sum()) == finite
    assert hist.left[0] == pytest.approx(hist.min, abs=1e-6)
    assert hist.left[-1] + hist.width[-1] == pytest.approx(hist.max, abs=1e-6)
    assert np.all(hist.width > 0)
    np.testing.assert_allclose(np.diff(hist.left), hist.width[:-1], rtol=1e-5, atol=1e-7)


# ----------------------------------------------------------------------------- all runs


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_golden_file_reads_without_damage(golden_dir: Path, name: str) -> None:
    events, stats = read_all(golden_dir / name)
    assert events
    assert_undamaged(stats, RECORDS[name])


@pytest.mark.parametrize("run", sorted(RUNS))
def test_run_directory_is_its_files_in_order(golden_dir: Path, run: str) -> None:
    events, stats = read_all(golden_dir / run)
    assert_undamaged(stats, sum(RECORDS[name] for name in RUNS[run]))
    concatenated = [event for name in RUNS[run] for event in read_all(golden_dir / name)[0]]
    assert [(e.plugin, e.tag, e.step, e.wall_time) for e in events] == [
        (e.plugin, e.tag, e.step, e.wall_time) for e in concatenated
    ]


@pytest.mark.parametrize("name", [n for n in sorted(RECORDS) if n.endswith("_MS")])
def test_summary_files_start_with_the_version_event(golden_dir: Path, name: str) -> None:
    payloads = list(RecordFile(golden_dir / name).read_payloads())
    first = summary_pb2.Event.FromString(payloads[0])
    assert first.WhichOneof("what") == "version"
    assert first.version == "MindSpore.Event:1"
    assert not first.HasField("step")


@pytest.mark.parametrize("name", [n for n in sorted(RECORDS) if n.endswith("_lineage")])
def test_lineage_files_have_no_version_event(golden_dir: Path, name: str) -> None:
    events, _ = read_all(golden_dir / name)
    assert len(events) == RECORDS[name]
    assert all(event.plugin.endswith(("lineage", "_graph", "_data")) for event in events)


@pytest.mark.parametrize("run", sorted(RUNS))
def test_read_scalars_matches_iter_events(golden_dir: Path, run: str, scalar_engine: str) -> None:
    scalars = read_scalars(golden_dir / run, engine=scalar_engine)
    assert_undamaged(scalars.stats, sum(RECORDS[name] for name in RUNS[run]))
    expected: dict[str, list[tuple[int, float, float]]] = {}
    for event in read_all(golden_dir / run)[0]:
        if event.plugin == "scalar":
            expected.setdefault(event.tag, []).append((event.step, event.wall_time, event.value))
    assert set(scalars) == set(expected)
    for tag, rows in expected.items():
        steps, walls, values = scalars[tag]
        assert steps.dtype == np.int64
        assert walls.dtype == np.float64
        assert values.dtype == np.float64
        assert steps.tolist() == [row[0] for row in rows]
        assert walls.tolist() == [row[1] for row in rows]
        assert values.tolist() == [row[2] for row in rows]


# ----------------------------------------------------------------------------- all_plugins


def test_all_plugins_holds_exactly_the_recorded_values(golden_dir: Path) -> None:
    events, _ = read_all(golden_dir / "all_plugins")
    per_step = Counter((e.step, e.plugin, e.tag) for e in events if e.step > 0)
    assert per_step == Counter(
        (step, plugin, tag)
        for step in (1, 2, 3)
        for plugin, tag in (
            ("scalar", "loss"),
            ("image", "img"),
            ("histogram", "w"),
            ("tensor", "t"),
        )
    )
    # One wall_time per record(step) call: every value of a step shares it.
    for step in (1, 2, 3):
        assert len({e.wall_time for e in events if e.step == step}) == 1


def test_all_plugins_scalars(golden_dir: Path) -> None:
    expected = all_plugins_expected()
    scalars = by_step_and_tag(read_all(golden_dir / ALL_PLUGINS_MS)[0], "scalar")
    assert sorted(scalars) == [(1, "loss"), (2, "loss"), (3, "loss")]
    for step in (1, 2, 3):
        assert scalars[step, "loss"].value == expected[step]["loss"]


@pytest.mark.parametrize("target", ["all_plugins", ALL_PLUGINS_MS])
def test_all_plugins_read_scalars(golden_dir: Path, target: str, scalar_engine: str) -> None:
    scalars = read_scalars(golden_dir / target, engine=scalar_engine)
    assert not scalars.stats.damaged
    assert scalars.stats.torn_tail_bytes == 0
    assert list(scalars) == ["loss"]
    steps, walls, values = scalars["loss"]
    assert steps.tolist() == [1, 2, 3]
    assert values.tolist() == [float(np.float32(1 / step)) for step in (1, 2, 3)]
    assert np.all(walls > 1.7e9)


def test_all_plugins_tensor(golden_dir: Path) -> None:
    expected = all_plugins_expected()
    tensors = by_step_and_tag(read_all(golden_dir / ALL_PLUGINS_MS)[0], "tensor")
    assert sorted(tensors) == [(1, "t"), (2, "t"), (3, "t")]
    for step in (1, 2, 3):
        array = tensors[step, "t"].value
        assert isinstance(array, np.ndarray)
        assert array.dtype == np.float32
        assert array.shape == (2, 3)
        np.testing.assert_array_equal(array, expected[step]["t"])


def test_all_plugins_histogram(golden_dir: Path) -> None:
    expected = all_plugins_expected()
    histograms = by_step_and_tag(read_all(golden_dir / ALL_PLUGINS_MS)[0], "histogram")
    assert sorted(histograms) == [(1, "w"), (2, "w"), (3, "w")]
    for step in (1, 2, 3):
        w = expected[step]["w"]
        hist = histograms[step, "w"].value
        assert isinstance(hist, Histogram)
        assert hist.count == 100
        assert (hist.nan_count, hist.pos_inf_count, hist.neg_inf_count) == (0, 0, 0)
        assert hist.min == float(w.min())
        assert hist.max == float(w.max())
        assert hist.sum == pytest.approx(float(w.astype(np.float64).sum()), rel=1e-12, abs=1e-12)
        bins = ms_bucket_count(100)
        assert bins == 11
        edges = np.linspace(w.min(), w.max(), bins + 1, dtype=np.float32)
        counts, _ = np.histogram(w, bins=edges)
        assert hist.counts.tolist() == counts.tolist()
        np.testing.assert_allclose(hist.left, edges[:-1], rtol=0, atol=1e-6)
        np.testing.assert_allclose(hist.width, np.diff(edges), rtol=0, atol=1e-6)
        check_histogram_shape(hist)


def test_all_plugins_image(golden_dir: Path) -> None:
    expected = all_plugins_expected()
    images = by_step_and_tag(read_all(golden_dir / ALL_PLUGINS_MS)[0], "image")
    assert sorted(images) == [(1, "img"), (2, "img"), (3, "img")]
    for step in (1, 2, 3):
        image = images[step, "img"].value
        # Two 3x8x8 images side by side: 8 high, 16 wide, RGB.
        assert (image.height, image.width, image.colorspace) == (8, 16, 3)
        pixels = png_pixels(image.encoded)
        assert pixels.shape == (8, 16, 3)
        want = to_uint8_like_mindspore(tile_nchw(expected[step]["img"]))
        np.testing.assert_array_equal(pixels, want)


def test_all_plugins_graph(golden_dir: Path) -> None:
    events, _ = read_all(golden_dir / ALL_PLUGINS_MS)
    graphs = [e for e in events if e.plugin == "graph"]
    assert len(graphs) == 1
    graph_event = graphs[0]
    assert graph_event.tag == Path(ALL_PLUGINS_MS).name
    graph = graph_event.value
    assert len(graph.node) > 0
    assert all(node.name for node in graph.node)
    assert [p.name for p in graph.parameters] == [
        "x",
        "fc1.weight",
        "fc1.bias",
        "fc2.weight",
        "fc2.bias",
    ]
    op_types = {node.op_type for node in graph.node}
    assert {"MatMul", "BiasAdd", "ReLU"} <= op_types


def test_all_plugins_lineage(golden_dir: Path) -> None:
    events, stats = read_all(golden_dir / ALL_PLUGINS_LINEAGE)
    assert_undamaged(stats, 3)
    assert [(e.plugin, e.tag) for e in events] == [
        ("custom_lineage_data", "custom_lineage_data"),
        ("train_lineage", "train_lineage"),
        ("eval_lineage", "eval_lineage"),
    ]
    assert all(e.wall_time > 1.7e9 for e in events)

    custom = events[0].value
    entries = []
    for entry in custom.user_info:
        maps = [
            (kind, dict(getattr(entry, kind)))
            for kind in ("map_str", "map_int32", "map_double", "map_dict")
            if len(getattr(entry, kind))
        ]
        assert len(maps) == 1, "one key per user_info entry"
        entries.append(maps[0])
    assert entries == [
        ("map_str", {"author": "golden"}),
        ("map_int32", {"batch_size": 2}),
        ("map_double", {"lr": 0.01}),
    ]

    train = events[1].value
    hyper = train.hyper_parameters
    assert hyper.optimizer == "Momentum"
    assert hyper.learning_rate == pytest.approx(0.01, rel=1e-7)
    assert hyper.learning_rate == float(np.float32(0.01))
    assert hyper.loss_function == "SoftmaxCrossEntropyWithLogits"
    assert hyper.epoch == 1
    assert hyper.parallel_mode == "stand_alone"
    assert hyper.device_num == 1
    assert hyper.batch_size == 2
    assert train.train_dataset.train_dataset_size == 6
    assert not train.train_dataset.HasField("train_dataset_path")
    assert train.algorithm.network == "TinyNet"
    assert train.algorithm.loss == float(np.float32(0.3333333))
    assert json.loads(train.model.path) == {"ckpt": ""}
    assert train.model.size == 0

    evaluation = events[2].value
    assert json.loads(evaluation.metric) == {"accuracy": 0.5}
    assert evaluation.valid_dataset.valid_dataset_size == 4


# ----------------------------------------------------------------------------- collector


def test_collector_scalars_steps(golden_dir: Path) -> None:
    events, _ = read_all(golden_dir / "collector")
    losses = [e for e in events if e.plugin == "scalar"]
    assert {e.tag for e in losses} == {"loss/auto"}
    assert [e.step for e in losses] == COLLECTOR_STEPS
    # The repeated step is the same value written twice (step_end, then epoch_end).
    assert losses[1].value == losses[2].value
    assert losses[4].value == losses[5].value
    assert all(0.5 < e.value < 2.0 for e in losses)


def test_collector_read_scalars(golden_dir: Path, scalar_engine: str) -> None:
    scalars = read_scalars(golden_dir / "collector", engine=scalar_engine)
    assert not scalars.stats.damaged
    assert scalars.stats.records == 11
    assert list(scalars) == ["loss/auto"]
    steps, _, values = scalars["loss/auto"]
    assert steps.tolist() == COLLECTOR_STEPS
    # The train lineage's final loss is the last loss recorded, as float32.
    train = next(
        e for e in iter_events(golden_dir / COLLECTOR_TRAIN_LINEAGE) if e.plugin == "train_lineage"
    )
    assert values[-1] == float(np.float32(train.value.algorithm.loss))


def test_collector_histograms(golden_dir: Path) -> None:
    events, _ = read_all(golden_dir / COLLECTOR_MS)
    histograms = [e for e in events if e.plugin == "histogram"]
    sizes = {"conv1.weight/auto": 2 * 1 * 3 * 3, "fc1.weight/auto": 3 * 18, "fc1.bias/auto": 3}
    assert Counter(e.tag for e in histograms) == Counter(
        {tag: len(COLLECTOR_STEPS) for tag in sizes}
    )
    for tag in sizes:
        assert [e.step for e in histograms if e.tag == tag] == COLLECTOR_STEPS
    for event in histograms:
        hist = event.value
        assert hist.count == sizes[event.tag]
        assert (hist.nan_count, hist.pos_inf_count, hist.neg_inf_count) == (0, 0, 0)
        check_histogram_shape(hist)
        assert hist.min < 0 < hist.max


def test_collector_input_images(golden_dir: Path) -> None:
    events, _ = read_all(golden_dir / COLLECTOR_MS)
    images = [e for e in events if e.plugin == "image"]
    assert {e.tag for e in images} == {"input_data/auto"}
    assert [e.step for e in images] == COLLECTOR_STEPS
    # 8 samples 1x8x8 from default_rng(0).random, batch 4, not shuffled: odd steps show
    # samples 0-3, even steps samples 4-7, each batch tiled 4 across (8 x 32, gray as RGB).
    data = np.random.default_rng(0).random((8, 1, 8, 8)).astype(np.float32)
    for event in images:
        image = event.value
        assert (image.height, image.width, image.colorspace) == (8, 32, 3)
        pixels = png_pixels(image.encoded)
        assert pixels.shape == (8, 32, 3)
        batch = (event.step - 1) % 2
        want = to_uint8_like_mindspore(tile_nchw(data[batch * 4 : batch * 4 + 4]))
        np.testing.assert_array_equal(pixels, want)


def test_collector_graph(golden_dir: Path) -> None:
    events, _ = read_all(golden_dir / COLLECTOR_MS)
    graphs = [e for e in events if e.plugin == "graph"]
    assert len(graphs) == 1
    graph = graphs[0].value
    assert len(graph.node) > 0
    names = [p.name for p in graph.parameters]
    assert {"conv1.weight", "fc1.weight", "fc1.bias"} <= set(names)
    assert {"Conv2D", "MaxPool", "MatMul", "ApplyMomentum"} <= {n.op_type for n in graph.node}


def test_collector_train_lineage_and_dataset_graph(golden_dir: Path) -> None:
    events, stats = read_all(golden_dir / COLLECTOR_TRAIN_LINEAGE)
    assert_undamaged(stats, 2)
    assert [e.plugin for e in events] == ["dataset_graph", "train_lineage"]

    root = events[0].value
    assert root.parameter.mapStr["op_type"] == "Batch"
    assert root.parameter.mapInt["batch_size"] == 4
    assert root.parameter.mapBool["drop_remainder"] is False
    assert len(root.children) == 1
    child = root.children[0]
    assert child.parameter.mapStr["op_type"] == "GeneratorDataset"
    assert len(child.children) == 0

    train = events[1].value
    hyper = train.hyper_parameters
    assert hyper.optimizer == "Momentum"
    assert hyper.learning_rate == float(np.float32(0.01))
    assert hyper.loss_function == "SoftmaxCrossEntropyWithLogits"
    assert hyper.epoch == 2
    assert hyper.parallel_mode == "stand_alone"
    assert hyper.device_num == 1
    assert hyper.batch_size == 4
    assert train.train_dataset.train_dataset_size == 8
    assert train.algorithm.network == "SmallLeNet"
    ckpt = json.loads(train.model.path)["ckpt"]
    assert ckpt.endswith("-2_2.ckpt")  # ModelCheckpoint's last file: epoch 2, step 2
    assert train.model.size > 0


def test_collector_eval_lineage_is_in_the_second_lineage_file(golden_dir: Path) -> None:
    events, stats = read_all(golden_dir / COLLECTOR_EVAL_LINEAGE)
    assert_undamaged(stats, 1)
    assert [e.plugin for e in events] == ["eval_lineage"]
    evaluation = events[0].value
    assert json.loads(evaluation.metric) == {"accuracy": 0.375}
    assert evaluation.valid_dataset.valid_dataset_size == 8
    # And the run directory yields it last (files in timestamp order).
    run_events, _ = read_all(golden_dir / "collector")
    assert run_events[-1].plugin == "eval_lineage"


# ----------------------------------------------------------------------------- landscape


def landscape_events(golden_dir: Path) -> dict[str, Event]:
    events, stats = read_all(golden_dir / LANDSCAPE_MS)
    assert_undamaged(stats, RECORDS[LANDSCAPE_MS])
    assert all(e.plugin == "landscape" for e in events)
    assert all(e.step == 0 for e in events)
    return {e.tag: e for e in events}


def test_landscape_tags(golden_dir: Path) -> None:
    assert list(landscape_events(golden_dir)) == ["landscape_[1, 3]", "landscape_[3]"]


def test_landscape_interval(golden_dir: Path) -> None:
    value = landscape_events(golden_dir)["landscape_[1, 3]"].value
    x = ms_tensor_to_array(value.landscape.x)
    y = ms_tensor_to_array(value.landscape.y)
    z = ms_tensor_to_array(value.landscape.z)
    assert x.shape == y.shape == (4,)
    assert x.dtype == y.dtype == np.float32  # DT_FLOAT32 for PCA
    assert z.shape == (4, 4)
    assert z.dtype == np.float64
    assert np.all(np.diff(x) > 0)
    assert np.all(np.diff(y) > 0)
    assert np.all((z > 0.5) & (z < 2.0))

    assert list(value.loss_path.intervals) == [1, 2, 3]
    points = value.loss_path.points
    px, py, pz = (ms_tensor_to_array(t) for t in (points.x, points.y, points.z))
    assert px.shape == py.shape == pz.shape == (3,)

    assert value.metadata.decomposition == "PCA"
    assert value.metadata.unit == "epoch"
    assert value.metadata.step_per_epoch == 2  # 8 samples, batch 4

    # The path ends where training converged: the convergence point is its last point.
    cx, cy, cz = (
        ms_tensor_to_array(t)
        for t in (value.convergence_point.x, value.convergence_point.y, value.convergence_point.z)
    )
    assert cx.tolist() == [px[-1]]
    assert cy.tolist() == [py[-1]]
    assert cz.tolist() == [pz[-1]]


def test_landscape_final(golden_dir: Path) -> None:
    value = landscape_events(golden_dir)["landscape_[3]"].value
    x = ms_tensor_to_array(value.landscape.x)
    y = ms_tensor_to_array(value.landscape.y)
    z = ms_tensor_to_array(value.landscape.z)
    assert x.dtype == y.dtype == np.float64  # DT_FLOAT64 for Random
    # A random-direction landscape spans [-1, 1] in L steps (values stored as float32).
    grid = np.linspace(-1, 1, 4).astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(x, grid)
    np.testing.assert_array_equal(y, grid)
    assert z.shape == (4, 4)
    assert np.all((z > 0.5) & (z < 2.0))

    # The final landscape has no loss path: that is how MindInsight tells it apart.
    assert not value.HasField("loss_path")
    assert value.metadata.decomposition == "Random"
    assert value.metadata.unit == "epoch"
    assert value.metadata.step_per_epoch == 2

    # Its convergence point is a grid point, and its z is the grid's z there.
    cx = ms_tensor_to_array(value.convergence_point.x)
    cy = ms_tensor_to_array(value.convergence_point.y)
    cz = ms_tensor_to_array(value.convergence_point.z)
    assert cx.shape == cy.shape == cz.shape == (1,)
    assert cx[0] in x and cy[0] in y
    zx, zy = int(np.flatnonzero(x == cx[0])[0]), int(np.flatnonzero(y == cy[0])[0])
    assert cz[0] in (z[zx, zy], z[zy, zx])


def test_landscape_training_file(golden_dir: Path, scalar_engine: str) -> None:
    events, _ = read_all(golden_dir / LANDSCAPE_TRAIN_MS)
    losses = [e for e in events if e.plugin == "scalar"]
    assert [e.step for e in losses] == LANDSCAPE_STEPS
    assert {e.tag for e in losses} == {"loss/auto"}
    histogram_tags = {e.tag for e in events if e.plugin == "histogram"}
    assert histogram_tags == {
        "fc1.weight/auto",
        "fc1.bias/auto",
        "fc2.weight/auto",
        "fc2.bias/auto",
    }
    for event in events:
        if event.plugin == "histogram":
            check_histogram_shape(event.value)

    scalars = read_scalars(golden_dir / "landscape", engine=scalar_engine)
    assert not scalars.stats.damaged
    steps, _, values = scalars["loss/auto"]
    assert steps.tolist() == LANDSCAPE_STEPS
    assert values.tolist() == [e.value for e in losses]


def test_landscape_lineage(golden_dir: Path) -> None:
    events, stats = read_all(golden_dir / LANDSCAPE_LINEAGE)
    assert_undamaged(stats, 2)
    assert [e.plugin for e in events] == ["dataset_graph", "train_lineage"]
    train = events[1].value
    assert train.algorithm.network == "TinyNet"
    assert train.hyper_parameters.epoch == 4
    assert train.hyper_parameters.batch_size == 4
    assert train.train_dataset.train_dataset_size == 8
    assert json.loads(train.model.path) == {"ckpt": None}  # no ModelCheckpoint callback
    assert train.model.size == 0
    losses = [e.value for e in read_all(golden_dir / LANDSCAPE_TRAIN_MS)[0] if e.plugin == "scalar"]
    assert train.algorithm.loss == float(np.float32(losses[-1]))
