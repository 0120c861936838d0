"""``sumlens.SummaryWriter`` against torch's: the same calls give the same tags, steps and
values to the real TensorBoard reader (images equal after decoding, histograms with the
same buckets); MindSpore's format keeps what it cannot hold in a TensorBoard file beside."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.summary import wait_for
from helpers.tensorboard import accumulator, decoded

import sumlens
from sumlens import SummaryWriter
from sumlens._proto import summary_pb2
from sumlens.io import read_scalars
from sumlens.io.framing import ReadStats, scan_all

torch = pytest.importorskip("torch")
tb_writer = pytest.importorskip("torch.utils.tensorboard")

RNG = np.random.default_rng(3)


def _both(tmp_path: Path, calls, **options) -> tuple:  # type: ignore[no-untyped-def]
    """Run ``calls(writer)`` on torch's writer and ours; their accumulators."""
    with tb_writer.SummaryWriter(str(tmp_path / "torch")) as theirs:
        calls(theirs)
    with SummaryWriter(tmp_path / "ours", **options) as ours:
        calls(ours)
    return accumulator(tmp_path / "torch"), accumulator(tmp_path / "ours")


def _scalars(acc, tag: str) -> list[tuple[int, float]]:  # type: ignore[no-untyped-def]
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def test_scalars_interleaved_steps_and_wall_times(tmp_path: Path) -> None:
    def calls(w) -> None:  # type: ignore[no-untyped-def]
        for step in range(5):
            w.add_scalar("loss", 1.0 / (step + 1), step, walltime=1000.0 + step)
            w.add_scalar("acc", torch.tensor(step / 10), global_step=step * 2)
        w.add_scalar("loss", np.float64(0.125), 3)  # a step written again, later
        w.add_scalar("no_step", 7)

    theirs, ours = _both(tmp_path, calls)
    assert sorted(ours.Tags()["scalars"]) == sorted(theirs.Tags()["scalars"])
    for tag in ("loss", "acc", "no_step"):
        assert _scalars(ours, tag) == _scalars(theirs, tag)
    assert [e.wall_time for e in ours.Scalars("loss")][:5] == [1000.0 + s for s in range(5)]


def test_scalars_of_many_runs_in_sub_runs(tmp_path: Path) -> None:
    def calls(w) -> None:  # type: ignore[no-untyped-def]
        for step in range(3):
            w.add_scalars("run/losses", {"train": step * 1.0, "val": step * 2.0}, step)

    _both(tmp_path, calls)
    for side in ("torch", "ours"):
        assert sorted(p.name for p in (tmp_path / side).iterdir() if p.is_dir()) == [
            "run_losses_train",
            "run_losses_val",
        ]
    for sub in ("run_losses_train", "run_losses_val"):
        theirs, ours = accumulator(tmp_path / "torch" / sub), accumulator(tmp_path / "ours" / sub)
        assert _scalars(ours, "run/losses") == _scalars(theirs, "run/losses")


@pytest.mark.parametrize(
    ("values", "bins", "max_bins"),
    [
        (RNG.normal(size=2000).astype(np.float32), "tensorflow", None),
        (RNG.integers(-50, 50, size=999), "tensorflow", None),
        (RNG.normal(size=2000), 30, None),
        (RNG.uniform(size=500), "auto", None),
        (RNG.normal(size=2000), "tensorflow", 64),
        (np.zeros(10), "tensorflow", None),
    ],
)
def test_histograms_have_torchs_buckets(tmp_path: Path, values, bins, max_bins) -> None:  # type: ignore[no-untyped-def]
    def calls(w) -> None:  # type: ignore[no-untyped-def]
        w.add_histogram("h", values, 1, bins=bins, max_bins=max_bins)
        w.add_histogram("t", torch.as_tensor(values), 2, bins=bins, max_bins=max_bins)

    theirs, ours = _both(tmp_path, calls)
    for tag in ("h", "t"):
        (a,), (b,) = theirs.Histograms(tag), ours.Histograms(tag)
        assert a.step == b.step
        assert b.histogram_value.bucket_limit == pytest.approx(a.histogram_value.bucket_limit)
        assert b.histogram_value.bucket == a.histogram_value.bucket
        for field in ("min", "max", "num", "sum", "sum_squares"):
            assert getattr(b.histogram_value, field) == pytest.approx(
                getattr(a.histogram_value, field), rel=1e-6
            )


def test_raw_histograms_are_kept_as_given(tmp_path: Path) -> None:
    def calls(w) -> None:  # type: ignore[no-untyped-def]
        w.add_histogram_raw("raw", 0.0, 3.0, 6, 9.0, 17.0, [1.0, 2.0, 3.0], [1, 2, 3], 4)

    theirs, ours = _both(tmp_path, calls)
    assert ours.Histograms("raw")[0].histogram_value == theirs.Histograms("raw")[0].histogram_value


def test_images_are_equal_after_decoding(tmp_path: Path) -> None:
    chw_float = RNG.uniform(-0.2, 1.2, size=(3, 8, 10)).astype(np.float32)
    hwc_uint8 = RNG.integers(0, 255, size=(6, 7, 3), dtype=np.uint8)
    gray = RNG.uniform(size=(5, 4))
    batch = torch.rand(10, 1, 4, 6)

    def calls(w) -> None:  # type: ignore[no-untyped-def]
        w.add_image("chw", chw_float, 0)
        w.add_image("hwc", hwc_uint8, 1, dataformats="HWC")
        w.add_image("hw", gray, 2, dataformats="HW")
        w.add_images("batch", batch, 3)

    theirs, ours = _both(tmp_path, calls)
    assert sorted(ours.Tags()["images"]) == sorted(theirs.Tags()["images"])
    for tag in ("chw", "hwc", "hw", "batch"):
        (a,), (b,) = theirs.Images(tag), ours.Images(tag)
        assert (a.step, a.width, a.height) == (b.step, b.width, b.height)
        np.testing.assert_array_equal(
            decoded(b.encoded_image_string), decoded(a.encoded_image_string)
        )


def test_new_style_scalars_are_tensors_of_the_scalars_plugin(tmp_path: Path) -> None:
    def calls(w) -> None:  # type: ignore[no-untyped-def]
        w.add_scalar("single", 0.1, 1, new_style=True)
        w.add_scalar("double", 0.1, 2, new_style=True, double_precision=True)

    theirs, ours = _both(tmp_path, calls)
    from tensorboard.util import tensor_util

    for tag in ("single", "double"):
        (a,), (b,) = theirs.Tensors(tag), ours.Tensors(tag)
        assert a.step == b.step
        assert tensor_util.make_ndarray(b.tensor_proto) == tensor_util.make_ndarray(a.tensor_proto)
        assert ours.SummaryMetadata(tag).plugin_data.plugin_name == "scalars"


def test_log_writes_one_step_per_call(tmp_path: Path) -> None:
    sumlens.init(tmp_path / "run")
    try:
        sumlens.log({"loss": 0.5, "train": {"acc": torch.tensor(0.25)}})
        sumlens.log({"loss": 0.25})
        sumlens.log({"loss": 0.125}, step=10)
        sumlens.log({"loss": 0.0625})
    finally:
        sumlens.finish()
    acc = accumulator(tmp_path / "run")
    assert _scalars(acc, "loss") == [(0, 0.5), (1, 0.25), (10, 0.125), (11, 0.0625)]
    assert _scalars(acc, "train/acc") == [(0, 0.25)]


def test_mindspore_format_reads_back(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path, file_format="mindspore") as w:
        for step in range(3):
            w.add_scalar("loss", 1.0 / (step + 1), step)
            w.add_histogram("w", RNG.normal(size=100), step)
        w.add_image("img", np.ones((3, 4, 4), dtype=np.float32), 0)
    summary = [p for p in tmp_path.iterdir() if ".summary." in p.name]
    assert len(summary) == 1
    columns = read_scalars(summary[0])
    assert columns["loss"][0].tolist() == [0, 1, 2]


def test_a_steps_scalars_given_one_call_each_are_one_mindspore_event(tmp_path: Path) -> None:
    """In MindSpore's format a step's scalars, logged one add_scalar at a time, are written
    as record() writes them: one event per step holding them all; the same tag twice at a
    step keeps both values."""
    with SummaryWriter(tmp_path, file_format="mindspore") as w:
        for step in range(3):
            for k in range(4):
                w.add_scalar(f"m{k}", step + k / 10, step)
        w.add_scalar("m0", 9.5, 2)
    (summary,) = [p for p in tmp_path.iterdir() if ".summary." in p.name]
    data = summary.read_bytes()
    records, _ = scan_all(data, 0, len(data), ReadStats())
    messages = [summary_pb2.Event.FromString(data[at : at + size]) for _, at, size in records]
    events = [
        (event.step, [(value.tag, value.scalar_value) for value in event.summary.value])
        for event in messages
        if event.HasField("summary") and event.summary.value[0].HasField("scalar_value")
    ]
    assert events == [
        (step, [(f"m{k}", pytest.approx(step + k / 10)) for k in range(4)]) for step in range(3)
    ] + [(2, [("m0", 9.5)])]


def test_a_value_given_after_its_steps_row_was_written_keeps_its_own_time(
    tmp_path: Path,
) -> None:
    """A step's scalars share the time of its first one only until the writer takes the
    row (within its wake-up period): the eval of step 5, logged minutes after step 5's
    loss, keeps the time it was logged at."""
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("loss", 1.0, 5)
        w.add_scalar("acc", 0.5, 5)

        def written() -> bool | None:
            return "loss" in accumulator(tmp_path).Tags()["scalars"] or None

        assert wait_for(written, timeout=30.0)  # no flush: the writer took the row itself
        w.add_scalar("eval", 0.25, 5)
    acc = accumulator(tmp_path)
    (loss,), (joined,), (late,) = (acc.Scalars(tag) for tag in ("loss", "acc", "eval"))
    # Equal times, unless the writer happened to take the row between the first two calls.
    assert loss.wall_time <= joined.wall_time < late.wall_time


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"file_format": "hdf5"}, "file_format"),
        ({"max_queue": 0}, "max_queue"),
        ({"flush_secs": -1}, "flush_secs"),
        ({"filename_suffix": "a/b"}, "filename_suffix"),
        ({"purge_step": -3}, "purge_step"),
    ],
)
def test_bad_arguments_are_named(tmp_path: Path, options: dict, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        SummaryWriter(tmp_path, **options)


def test_bad_values_are_named_where_called(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path) as w:
        with pytest.raises((ValueError, TypeError), match="global_step"):
            w.add_scalar("x", 1.0, "seven")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("h", np.array([]), 0)
        with pytest.raises(ValueError, match="bucket_limits"):
            w.add_histogram_raw("r", 0, 1, 2, 1, 1, [1.0, 2.0], [1], 0)


def test_a_histogram_holds_the_values_as_they_were_when_given(tmp_path: Path) -> None:
    """Binned later on the writer thread, from a copy (reused buffers included)."""
    values = torch.ones(1000)
    with SummaryWriter(tmp_path) as w:
        for step in range(6):
            w.add_histogram("h", values, step)
            values.mul_(2)  # the caller goes on changing its tensor
    maxima = [h.histogram_value.max for h in accumulator(tmp_path).Histograms("h")]
    assert maxima == [2.0**step for step in range(6)]


def test_hparams_of_tensors_reach_the_lineage(tmp_path: Path) -> None:
    from helpers.summary import read_events

    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": torch.tensor(0.25), "optimizer": "adam"}, {"acc": torch.tensor(0.5)})
    lineage = [e for p in tmp_path.iterdir() if "lineage" in p.name for e in read_events(p)]
    (train,) = [e.value for e in lineage if e.plugin == "train_lineage"]
    (evaluation,) = [e.value for e in lineage if e.plugin == "eval_lineage"]
    assert train.hyper_parameters.learning_rate == 0.25
    assert train.hyper_parameters.optimizer == "adam"
    assert evaluation.metric == '{"acc": 0.5}'


def test_values_after_close_go_to_a_new_file(tmp_path: Path) -> None:
    """As with torch's writer: closing is not the end of the writer."""
    writer = SummaryWriter(tmp_path)
    writer.add_scalar("loss", 1.0, 0)
    writer.add_scalar("acc", 0.5, 1)
    writer.close()
    writer.close()  # twice is fine
    writer.add_scalar("loss", 2.0, 1)  # could join step 1's row, had it not been written
    writer.flush()
    writer.close()
    assert len([p for p in tmp_path.iterdir() if "tfevents" in p.name]) == 2
    assert _scalars(accumulator(tmp_path), "loss") == [(0, 1.0), (1, 2.0)]
    assert _scalars(accumulator(tmp_path), "acc") == [(1, 0.5)]


def test_the_histogram_kernels_start_getting_ready_with_the_writer(tmp_path: Path) -> None:
    """torch's buckets are binned by compiled kernels once they are loaded (0.2 s from the
    cache): a writer in TensorBoard's format starts loading them when it is made, so its
    first histograms do not fall back to numpy. A fresh process, so nothing started them."""
    script = (
        "import sys\n"
        "from sumlens import SummaryWriter\n"
        "from sumlens.writer.histogram import HISTOGRAM_KERNELS\n"
        "assert not HISTOGRAM_KERNELS.started\n"
        "with SummaryWriter(sys.argv[1], file_format='mindspore'):\n"
        "    assert not HISTOGRAM_KERNELS.started, 'MindSpore format bins its own way'\n"
        "with SummaryWriter(sys.argv[1]):\n"
        "    assert HISTOGRAM_KERNELS.started\n"
        "    assert HISTOGRAM_KERNELS.wait(timeout=600)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr
