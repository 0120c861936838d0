"""The TensorBoard plugin payloads of ``sumlens.writer`` against torch's writer.

Each builder is compared with the function torch's ``SummaryWriter`` calls for the same
method (``torch.utils.tensorboard.summary``): torch's Summary is parsed into our
``tensorboard_pb2`` and its plugin content into our ``tensorboard_plugins_pb2``, so the
field numbers are checked too. Audio is compared after decoding the WAV, images and
embedding sprites after decoding the PNG; the video, which torch needs moviepy for, is
checked by decoding our GIF against the frames torch's writer would lay out.
"""

from __future__ import annotations

import io
import os
import sys
import wave
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from google.protobuf import text_format
from PIL import Image, ImageSequence
from tensorboard.plugins.hparams import summary_v2 as tb_hparams
from torch.utils.tensorboard import SummaryWriter as TorchWriter
from torch.utils.tensorboard import _utils as torch_utils
from torch.utils.tensorboard import summary as torch_summary

from sumlens._proto import tensorboard_pb2 as tbpb
from sumlens._proto import tensorboard_plugins_pb2 as plugins
from sumlens.writer.audio import audio_value
from sumlens.writer.boxes import draw_boxes
from sumlens.writer.custom_scalars import custom_scalars_value
from sumlens.writer.embedding import write_embedding
from sumlens.writer.figure import figure_to_image
from sumlens.writer.hparams import hparams_values
from sumlens.writer.mesh import mesh_values
from sumlens.writer.pr_curve import pr_curve_raw_value, pr_curve_value
from sumlens.writer.text import text_value
from sumlens.writer.video import video_value


def _values(torch_proto: object) -> list[tbpb.Summary.Value]:
    """torch's Summary (TensorBoard's own proto) read back with our schema."""
    return list(tbpb.Summary.FromString(torch_proto.SerializeToString()).value)


def _content(value: tbpb.Summary.Value, message: type) -> object:
    return message.FromString(value.metadata.plugin_data.content)


def test_text_is_torchs() -> None:
    (theirs,) = _values(torch_summary.text("notes", "**bold** ünïcode"))
    ours = text_value("notes", "**bold** ünïcode")
    assert ours == theirs
    assert ours.tag == "notes/text_summary"
    assert ours.metadata.plugin_data.plugin_name == "text"
    assert _content(ours, plugins.TextPluginData) == plugins.TextPluginData(version=0)
    assert ours.tensor.dtype == tbpb.DT_STRING
    assert [dim.size for dim in ours.tensor.tensor_shape.dim] == [1]


def _wav(value: tbpb.Summary.Value) -> tuple[tuple[int, int, int, int], bytes]:
    with wave.open(io.BytesIO(value.audio.encoded_audio_string), "rb") as wav:
        params = (wav.getnchannels(), wav.getsampwidth(), wav.getframerate(), wav.getnframes())
        return params, wav.readframes(wav.getnframes())


@pytest.mark.parametrize(
    ("samples", "rate"),
    [
        (torch.linspace(-1, 1, 801).sin().unsqueeze(0), 16000),  # [1, L] float32
        (np.random.default_rng(0).uniform(-1.5, 1.5, 300), 8000),  # float64, clipped
        (torch.rand(257, 1) * 2 - 1, 44100),  # [L, 1]
    ],
)
def test_audio_is_torchs_wav(samples: object, rate: int) -> None:
    (theirs,) = _values(torch_summary.audio("sound", samples, sample_rate=rate))
    ours = audio_value("sound", samples, rate)
    assert ours.tag == theirs.tag == "sound"
    for field in ("sample_rate", "num_channels", "length_frames", "content_type"):
        assert getattr(ours.audio, field) == getattr(theirs.audio, field), field
    assert _wav(ours) == _wav(theirs)
    assert _wav(ours)[0] == (1, 2, rate, np.asarray(samples).size)


def _check_curve(ours: tbpb.Summary.Value, theirs: tbpb.Summary.Value, thresholds: int) -> None:
    assert ours.tag == theirs.tag
    assert ours.metadata.plugin_data.plugin_name == "pr_curves"
    assert _content(ours, plugins.PrCurvePluginData) == _content(theirs, plugins.PrCurvePluginData)
    assert _content(ours, plugins.PrCurvePluginData).num_thresholds == thresholds
    assert ours.tensor.dtype == theirs.tensor.dtype == tbpb.DT_FLOAT
    assert ours.tensor.tensor_shape == theirs.tensor.tensor_shape
    assert [dim.size for dim in ours.tensor.tensor_shape.dim] == [6, thresholds]
    np.testing.assert_allclose(ours.tensor.float_val, theirs.tensor.float_val, rtol=1e-6)


@pytest.mark.parametrize(
    ("num_thresholds", "weighted"), [(127, False), (11, True), (2, False), (300, False)]
)
def test_pr_curve_is_torchs(num_thresholds: int, weighted: bool) -> None:
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, 200)
    predictions = rng.uniform(0, 1, 200)
    predictions[:3] = [0.0, 1.0, 0.5]
    weights = rng.uniform(0, 3, 200) if weighted else None
    (theirs,) = _values(torch_summary.pr_curve("pr", labels, predictions, num_thresholds, weights))
    ours = pr_curve_value(
        "pr", torch.from_numpy(labels), predictions.tolist(), num_thresholds, weights
    )
    _check_curve(ours, theirs, min(num_thresholds, 127))


def test_pr_curve_raw_is_torchs() -> None:
    rng = np.random.default_rng(2)
    counts = [rng.integers(0, 50, 5).astype(np.float64) for _ in range(4)]
    precision, recall = rng.uniform(0, 1, 5), rng.uniform(0, 1, 5)
    (theirs,) = _values(torch_summary.pr_curve_raw("raw", *counts, precision, recall, 5))
    ours = pr_curve_raw_value("raw", *counts, precision, recall, 5)
    _check_curve(ours, theirs, 5)


def test_custom_scalars_are_torchs() -> None:
    layout = {
        "Losses": {"all": ["Multiline", ["loss/train", "loss/.*"]], "none yet": ["Multiline", []]},
        "Bands": {"accuracy": ["Margin", ["acc/mean", "acc/low", "acc/high"]]},
        "Empty": {},
    }
    (theirs,) = _values(torch_summary.custom_scalars(layout))
    ours = custom_scalars_value(layout)
    assert ours == theirs
    assert ours.tag == "custom_scalars__config__"
    assert ours.metadata.plugin_data.plugin_name == "custom_scalars"
    assert ours.tensor.dtype == tbpb.DT_STRING and not ours.tensor.tensor_shape.dim
    parsed = plugins.Layout.FromString(ours.tensor.string_val[0])
    assert [category.title for category in parsed.category] == ["Losses", "Bands", "Empty"]
    assert list(parsed.category[0].chart[0].multiline.tag) == ["loss/train", "loss/.*"]
    assert parsed.category[1].chart[0].margin.series[0].upper == "acc/high"


def test_mesh_is_torchs() -> None:
    vertices = torch.tensor([[[1, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]], dtype=torch.float)
    colors = torch.tensor([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 255]]])
    faces = torch.tensor([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]], dtype=torch.int)
    config = {"camera": {"cls": "PerspectiveCamera", "fov": 75}, "lights": []}
    theirs = _values(torch_summary.mesh("cube", vertices, colors, faces, config))
    ours = mesh_values("cube", vertices, colors, faces, config)
    assert [value.tag for value in ours] == ["cube_VERTEX", "cube_FACE", "cube_COLOR"]
    assert [value.tag for value in ours] == [value.tag for value in theirs]
    for mine, reference in zip(ours, theirs, strict=True):
        assert mine.metadata.plugin_data.plugin_name == "mesh"
        assert _content(mine, plugins.MeshPluginData) == _content(reference, plugins.MeshPluginData)
        assert mine.tensor == reference.tensor
    data = _content(ours[1], plugins.MeshPluginData)
    assert data.content_type == plugins.MeshPluginData.FACE and data.components == 0b1110
    assert list(data.shape) == [1, 4, 3]
    (points,) = mesh_values("cloud", vertices.numpy(), None, None, None)
    (reference,) = _values(torch_summary.mesh("cloud", vertices, None, None, None))
    assert _content(points, plugins.MeshPluginData) == _content(reference, plugins.MeshPluginData)


def test_hparams_are_torchs() -> None:
    hparams = {"lr": 0.01, "batch": 32, "optimizer": "adam", "absent": None}
    metrics = {"hparam/accuracy": 0.9, "hparam/loss": 0.3}
    domains = {"optimizer": ["adam", "sgd"], "batch": [16, 32, 64]}
    theirs = [
        value
        for summary in torch_summary.hparams(hparams, metrics, domains)
        for value in _values(summary)
    ]
    ours = hparams_values(hparams, metrics, domains)
    assert [value.tag for value in ours] == [
        "_hparams_/experiment",
        "_hparams_/session_start_info",
        "_hparams_/session_end_info",
    ]
    for mine, reference in zip(ours, theirs, strict=True):
        assert mine.tag == reference.tag
        assert mine.metadata.plugin_data.plugin_name == "hparams"
        assert _content(mine, plugins.HParamsPluginData) == _content(
            reference, plugins.HParamsPluginData
        )
    end = _content(ours[2], plugins.HParamsPluginData).session_end_info
    assert end.status == plugins.STATUS_SUCCESS


def test_bool_hparams_are_tensorboards() -> None:
    """Torch's writer records a bool as 1.0; TensorBoard's own hparams API (and we) as a bool."""
    _, start, _ = hparams_values({"augment": True}, {})
    (reference,) = [
        value
        for value in _values(tb_hparams.hparams_pb({"augment": True}))
        if value.tag == "_hparams_/session_start_info"
    ]
    ours = _content(start, plugins.HParamsPluginData).session_start_info.hparams["augment"]
    tbs = _content(reference, plugins.HParamsPluginData).session_start_info.hparams["augment"]
    assert ours == tbs and ours.WhichOneof("kind") == "bool_value"
    experiment, _, _ = hparams_values({"augment": True}, {}, {"augment": [True, False]})
    (info,) = _content(experiment, plugins.HParamsPluginData).experiment.hparam_infos
    assert info.type == plugins.DATA_TYPE_BOOL
    assert [choice.bool_value for choice in info.domain_discrete.values] == [True, False]


def test_video_gif_holds_torchs_frames() -> None:
    """Three clips of four frames in eight colours: tiled as torch's writer tiles them (padded
    to four clips in one row) and back unchanged from the GIF."""
    rng = np.random.default_rng(3)
    clips = rng.integers(0, 2, (3, 4, 3, 6, 5)).astype(np.float32)
    clips[:, :, 0, 0, 0] = np.arange(4) % 2  # the frames differ
    clips[:, :, 1, 0, 0] = np.arange(4) // 2
    value = video_value("clip", torch.from_numpy(clips), fps=4)
    expected = (torch_utils._prepare_video(clips) * 255).clip(0, 255).astype(np.uint8)
    assert expected.shape == (4, 6, 20, 3)
    image = value.image
    assert (image.height, image.width, image.colorspace) == (6, 20, 3)
    gif = Image.open(io.BytesIO(image.encoded_image_string))
    assert gif.format == "GIF" and gif.info.get("loop") == 0
    frames = [np.asarray(frame.convert("RGB")) for frame in ImageSequence.Iterator(gif)]
    assert len(frames) == 4
    np.testing.assert_array_equal(np.stack(frames), expected)
    gif.seek(1)
    assert gif.info["duration"] == 250


def test_boxes_are_torchs() -> None:
    rng = np.random.default_rng(4)
    image = rng.uniform(0, 1, (3, 48, 64)).astype(np.float32)
    boxes = np.array([[4, 5, 30, 40], [20.5, 10, 60, 44], [0, 0, 63, 47]], dtype=np.float32)
    labels = ["cat", "", "a dog"]
    theirs = _values(torch_summary.image_boxes("b", image, boxes, labels=labels))[0].image
    reference = np.asarray(Image.open(io.BytesIO(theirs.encoded_image_string)))
    hwc = (image.transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8)
    drawn = draw_boxes(hwc, torch.from_numpy(boxes), labels)
    np.testing.assert_array_equal(drawn, reference)
    assert not np.array_equal(drawn, hwc)
    plain = draw_boxes(hwc, boxes, ["too", "few"])  # torch's writer drops such labels
    reference = _values(torch_summary.image_boxes("b", image, boxes))[0].image
    decoded = np.asarray(Image.open(io.BytesIO(reference.encoded_image_string)))
    np.testing.assert_array_equal(plain, decoded)
    grey = image[:1]
    reference = _values(torch_summary.image_boxes("b", grey, boxes, labels=labels))[0].image
    decoded = np.asarray(Image.open(io.BytesIO(reference.encoded_image_string)))
    pixels = (grey.transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8)
    np.testing.assert_array_equal(draw_boxes(pixels, boxes, labels), decoded)


def test_figures_render_as_torchs() -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    def figure(color: str) -> Figure:
        drawing = Figure(figsize=(2, 1.5), dpi=50)
        drawing.add_subplot().plot([0, 1, 0.5], color=color)
        return drawing

    one = figure("red")
    ours = figure_to_image(one, close=False)
    assert ours.dtype == np.uint8 and ours.shape == (75, 100, 3)
    np.testing.assert_array_equal(ours, torch_utils.figure_to_image(one).transpose(1, 2, 0))
    pair = [figure("red"), figure("blue")]
    batch = figure_to_image(pair)
    assert batch.shape == (2, 75, 100, 3)
    np.testing.assert_array_equal(batch[1], figure_to_image(figure("blue")))
    assert not np.array_equal(batch[0], batch[1])
    with pytest.raises(TypeError, match="'figure' must be a matplotlib Figure"):
        figure_to_image("plot")


def test_figures_without_matplotlib_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("matplotlib", "matplotlib.backends.backend_agg", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    with pytest.raises(ImportError, match="needs matplotlib"):
        figure_to_image(object())


def _projector(log_dir: str) -> plugins.ProjectorConfig:
    with open(os.path.join(log_dir, "projector_config.pbtxt"), encoding="utf-8") as config:
        return text_format.Parse(config.read(), plugins.ProjectorConfig())


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def test_embedding_files_are_torchs(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    mat = torch.from_numpy(rng.normal(size=(10, 4)).astype(np.float32))
    labels = [f"item {index}" for index in range(10)]
    images = torch.from_numpy(rng.uniform(0, 1, (10, 3, 4, 6)).astype(np.float32))
    columns = [[index, index % 3] for index in range(10)]
    calls = [
        {"mat": mat, "metadata": labels, "label_img": images},
        {"mat": mat * 2, "global_step": 7, "tag": "a/b%c"},
        {"mat": mat, "metadata": columns, "metadata_header": ["id", "class"], "tag": "cols",
         "label_img": images[:, :1]},
    ]  # fmt: skip
    theirs, ours = str(tmp_path / "torch"), str(tmp_path / "ours")
    with TorchWriter(theirs) as writer:
        for call in calls:
            writer.add_embedding(**call)
    for call in calls:
        write_embedding(ours, **call)
    config = _projector(ours)
    assert config == _projector(theirs)
    assert [entry.tensor_path for entry in config.embeddings] == [
        "00000/default/tensors.tsv",
        "00007/a%2fb%25c/tensors.tsv",
        "00000/cols/tensors.tsv",
    ]
    for entry in config.embeddings:
        for path in (entry.tensor_path, entry.metadata_path):
            if path:
                assert _read(os.path.join(ours, path)) == _read(os.path.join(theirs, path)), path
        if entry.sprite.image_path:
            sprites = [
                Image.open(os.path.join(root, entry.sprite.image_path)) for root in (ours, theirs)
            ]
            np.testing.assert_array_equal(*(np.asarray(sprite) for sprite in sprites))
            assert list(entry.sprite.single_image_dim) == [6, 4]
    write_embedding(ours, mat, global_step=7, tag="a/b%c")  # the same entry again: replaced
    assert len(_projector(ours).embeddings) == 3


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: text_value("t", 3), TypeError, "'text_string'"),
        (lambda: audio_value("a", np.zeros((2, 100)), 8000), ValueError, "[2, 100]"),
        (lambda: audio_value("a", [0.1, float("nan")], 8000), ValueError, "'snd_tensor'"),
        (lambda: audio_value("a", [0.1], 0), ValueError, "'sample_rate'"),
        (lambda: pr_curve_value("p", [0, 1], [0.2, 1.5]), ValueError, "'predictions'"),
        (lambda: pr_curve_value("p", [0, 1], [0.2, float("nan")]), ValueError, "NaN"),
        (lambda: pr_curve_value("p", [0, 1], [0.2], 5), ValueError, "same shape"),
        (lambda: pr_curve_value("p", [0, 1], [0.2, 0.3], 1), ValueError, "'num_thresholds'"),
        (lambda: pr_curve_raw_value("p", *[[1, 2]] * 5, [1]), ValueError, "recall: 1"),
        (lambda: custom_scalars_value({"c": {"x": ["Lines", ["a"]]}}), ValueError, "'Lines'"),
        (lambda: custom_scalars_value({"c": {"x": ["Margin", ["a"]]}}), ValueError, "3"),
        (lambda: mesh_values("m", np.zeros((4, 3)), None, None, None), ValueError, "'vertices'"),
        (lambda: mesh_values("m", np.zeros((1, 4, 3)), None, [[[0, 1, 9]]], None), ValueError,
         "'faces'"),
        (lambda: mesh_values("m", np.zeros((1, 4, 3)), np.zeros((1, 3, 3)), None, None),
         ValueError, "[1, 4, 3]"),
        (lambda: hparams_values({"lr": [0.1]}, {}), TypeError, "hparam_dict['lr']"),
        (lambda: hparams_values({"lr": 0.1}, {}, {"wd": [0.1]}), ValueError, "'wd'"),
        (lambda: hparams_values({"lr": 0.1}, {}, {"lr": ["a"]}), TypeError, "'lr'"),
        (lambda: video_value("v", np.zeros((2, 3, 5, 4))), ValueError, "[B, T, C, H, W]"),
        (lambda: video_value("v", np.zeros((1, 2, 3, 4, 4)), 0), ValueError, "'fps'"),
        (lambda: draw_boxes(np.zeros((4, 4, 3), np.uint8), [[1, 2, 3]]), ValueError, "[N, 4]"),
        (lambda: write_embedding("unused", np.zeros(3)), ValueError, "'mat'"),
        (lambda: write_embedding("unused", np.zeros((2, 3)), ["a"]), ValueError, "'metadata'"),
        (lambda: write_embedding("unused", np.zeros((2, 3)), ["a", "b\tc"]), ValueError, "tabs"),
        (lambda: write_embedding("unused", np.zeros((2, 3)), None, np.zeros((2, 2, 4, 4))),
         ValueError, "'label_img'"),
    ],
)  # fmt: skip
def test_bad_input_is_named(call: Callable[[], object], error: type, words: str) -> None:
    with pytest.raises(error) as raised:
        call()
    assert words in str(raised.value)
