"""One script written for torch's ``SummaryWriter``, calling every method, runs unchanged on
``sumlens.SummaryWriter`` but for the import; the real TensorBoard reader finds the same
tags, steps and values in both outputs (images and audio equal after decoding, histograms
with the same buckets, the same plugin records and graph)."""

from __future__ import annotations

import io
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.tensorboard import accumulator, decoded

import sumlens

torch = pytest.importorskip("torch")
torch_tb = pytest.importorskip("torch.utils.tensorboard")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
onnx = pytest.importorskip("onnx")


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 2, 3)
        self.fc = torch.nn.Linear(2 * 4 * 4, 3)

    def forward(self, x: Any) -> Any:
        return self.fc(torch.relu(self.conv(x)).flatten(1))


def onnx_file(path: Path) -> Path:
    """A one-node ONNX model, made with onnx's helpers."""
    from onnx import TensorProto, helper

    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    onnx.save(helper.make_model(graph), str(path))
    return path


def script(SummaryWriter: Any, log_dir: Path, onnx_path: Path) -> str:
    """What a user's training script logs, with every method of torch's writer."""
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    with SummaryWriter(str(log_dir)) as writer:
        for step in range(3):
            writer.add_scalar("loss", 1.0 / (step + 1), step)
            writer.add_scalars("lr", {"a": 0.1 * step, "b": 0.2 * step}, step)
            writer.add_histogram("weights", rng.normal(size=300), step)
            writer.add_image("image", rng.uniform(size=(3, 6, 7)), step)
        writer.add_tensor("tensor", torch.arange(6.0).reshape(2, 3), 1)
        writer.add_histogram_raw("raw", 0, 2, 3, 3, 5, [1.0, 2.0], [1, 2], 1)
        writer.add_images("images", torch.rand(5, 3, 4, 4), 1)
        boxes = torch.tensor([[1.0, 1.0, 5.0, 6.0]])
        writer.add_image_with_boxes("boxes", torch.rand(3, 10, 12), boxes, 1, labels=["cat"])
        figure = plt.figure(figsize=(1, 1), dpi=40)
        plt.plot([0, 1], [1, 0])
        writer.add_figure("figure", figure, 1)
        writer.add_audio("audio", torch.sin(torch.arange(800.0) / 10), 1, sample_rate=8000)
        writer.add_text("text", "**bold** and a | table |", 1)
        writer.add_graph(Net(), torch.rand(1, 1, 6, 6))
        writer.add_onnx_graph(str(onnx_path))
        writer.add_embedding(torch.rand(6, 4), metadata=list("abcdef"), global_step=1, tag="emb")
        labels, predictions = rng.integers(0, 2, 50), rng.uniform(size=50)
        writer.add_pr_curve("pr", labels, predictions, 1, num_thresholds=11)
        counts = [np.array([4.0, 2.0, 0.0]) for _ in range(4)]
        writer.add_pr_curve_raw("pr_raw", *counts, [0.5, 0.6, 1.0], [1.0, 0.5, 0.0], 1, 3)
        writer.add_custom_scalars({"train": {"loss": ["Multiline", ["loss"]]}})
        writer.add_custom_scalars_multilinechart(["loss"], "more", "lines")
        writer.add_custom_scalars_marginchart(["loss", "loss", "loss"], "more", "margin")
        vertices = torch.rand(1, 4, 3)
        faces = torch.tensor([[[0, 1, 2], [1, 2, 3]]])
        writer.add_mesh("mesh", vertices, faces=faces, global_step=1)
        writer.add_hparams({"lr": 0.1, "layers": 3, "opt": "sgd"}, {"hp/acc": 0.5})
        writer.flush()
        return writer.get_logdir()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("every_method")
    path = onnx_file(tmp / "model.onnx")
    assert script(torch_tb.SummaryWriter, tmp / "torch", path) == str(tmp / "torch")
    assert script(sumlens.SummaryWriter, tmp / "ours", path) == str(tmp / "ours")
    return tmp / "torch", tmp / "ours"


HPARAMS_TAGS = {
    "hp/acc",
    "_hparams_/experiment",
    "_hparams_/session_start_info",
    "_hparams_/session_end_info",
}
"""What add_hparams writes: into the run for us, into a sub-run for torch's writer."""


def test_the_same_tags_of_every_kind(runs: tuple[Path, Path]) -> None:
    theirs, ours = (accumulator(run).Tags() for run in runs)
    for kind in ("scalars", "histograms", "images", "audio", "tensors"):
        assert sorted(set(ours[kind]) - HPARAMS_TAGS) == sorted(theirs[kind]), kind
    assert ours["graph"] and theirs["graph"]
    assert ours["run_metadata"] == theirs["run_metadata"] == ["step1"]


def test_the_same_values(runs: tuple[Path, Path]) -> None:
    theirs, ours = (accumulator(run) for run in runs)
    for tag in theirs.Tags()["scalars"]:
        assert [(e.step, e.value) for e in ours.Scalars(tag)] == [
            (e.step, e.value) for e in theirs.Scalars(tag)
        ]
    for tag in theirs.Tags()["histograms"]:
        for a, b in zip(theirs.Histograms(tag), ours.Histograms(tag), strict=True):
            assert a.step == b.step
            assert list(b.histogram_value.bucket) == list(a.histogram_value.bucket)
            assert list(b.histogram_value.bucket_limit) == pytest.approx(
                list(a.histogram_value.bucket_limit)
            )
    for tag in theirs.Tags()["images"]:
        for a, b in zip(theirs.Images(tag), ours.Images(tag), strict=True):
            assert a.step == b.step, tag
            np.testing.assert_array_equal(
                decoded(b.encoded_image_string), decoded(a.encoded_image_string), err_msg=tag
            )
    (a,), (b,) = theirs.Audio("audio"), ours.Audio("audio")
    assert _samples(b.encoded_audio_string) == _samples(a.encoded_audio_string)
    from tensorboard.util import tensor_util

    for tag in theirs.Tags()["tensors"]:
        for a, b in zip(theirs.Tensors(tag), ours.Tensors(tag), strict=True):
            assert a.step == b.step, tag
            mine, reference = (tensor_util.make_ndarray(e.tensor_proto) for e in (b, a))
            if mine.dtype.kind in "fc":
                np.testing.assert_allclose(mine, reference, rtol=1e-6, err_msg=tag)
            else:
                np.testing.assert_array_equal(mine, reference, err_msg=tag)
        meta_a, meta_b = theirs.SummaryMetadata(tag), ours.SummaryMetadata(tag)
        assert meta_b.plugin_data.plugin_name == meta_a.plugin_data.plugin_name, tag


def _samples(wav: bytes) -> tuple[int, int, bytes]:
    with wave.open(io.BytesIO(wav)) as clip:
        return clip.getframerate(), clip.getnchannels(), clip.readframes(clip.getnframes())


def test_hyper_parameters_stay_in_the_run(runs: tuple[Path, Path]) -> None:
    """torch's writer puts them in a sub-run named by the time; ours keeps them in the run,
    with the same hparams records."""
    theirs_root, ours = runs
    (sub,) = [p for p in theirs_root.iterdir() if p.is_dir() and "." in p.name]  # time.time()
    theirs, mine = accumulator(sub), accumulator(ours)
    hparams = ["_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"]
    for tag in hparams:
        assert mine.SummaryMetadata(tag).plugin_data.plugin_name == "hparams"
        assert theirs.SummaryMetadata(tag).plugin_data.plugin_name == "hparams"
    assert [e.value for e in mine.Scalars("hp/acc")] == [0.5]


def test_embeddings_are_laid_out_alike(runs: tuple[Path, Path]) -> None:
    theirs, ours = runs
    names = sorted(str(p.relative_to(theirs)) for p in theirs.rglob("*.tsv"))
    assert names and names == sorted(str(p.relative_to(ours)) for p in ours.rglob("*.tsv"))
    assert (ours / "projector_config.pbtxt").is_file()


def test_a_video_needs_no_moviepy(tmp_path: Path) -> None:
    with sumlens.SummaryWriter(tmp_path) as writer:
        writer.add_video("video", torch.rand(1, 4, 3, 8, 8), 2, fps=4)
    (image,) = accumulator(tmp_path).Images("video")
    assert (image.step, image.width, image.height) == (2, 8, 8)
    assert image.encoded_image_string[:4] == b"GIF8"


def test_purge_step_marks_a_restart(tmp_path: Path) -> None:
    """Steps at and after ``purge_step`` written by the run before are dropped by
    TensorBoard's reader, as for torch's writer."""
    with sumlens.SummaryWriter(tmp_path) as writer:
        for step in range(10):
            writer.add_scalar("loss", float(step), step)
    with sumlens.SummaryWriter(tmp_path, purge_step=5) as writer:
        writer.add_scalar("loss", 50.0, 5)
    steps = [(e.step, e.value) for e in accumulator(tmp_path).Scalars("loss")]
    assert steps == [(s, float(s)) for s in range(5)] + [(5, 50.0)]
