"""What torch's ``SummaryWriter``, Lightning's ``TensorBoardLogger`` and Hugging Face's
``Trainer`` write to TensorBoard is read back whole by both engines: every tag the real
``EventAccumulator`` finds, with the same values, and nothing skipped but the plugins sumlens
does not show (torch's mesh and custom scalars)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.tb_logs import (
    TORCH_SKIPPED,
    hf_tensorboard_run,
    lightning_tensorboard_run,
    torch_every_method,
)
from helpers.tensorboard import accumulator

from sumlens._proto import tensorboard_plugins_pb2
from sumlens.io import Event, ReadStats, read_file_scalars

pytest.importorskip("torch")
tensor_util = pytest.importorskip("tensorboard.util.tensor_util")

SHOWN_TENSOR_PLUGINS = {"text": "text", "pr_curves": "pr_curve"}
"""TensorBoard tensor plugins sumlens reads, by the ``Event.plugin`` they become."""


class Read:
    """A run directory's event files read by one engine: scalars, other events, counts."""

    def __init__(self, run: Path, engine: str, values: bool = True) -> None:
        self.scalars: dict[str, list[tuple[int, float]]] = {}
        self.events: list[Event] = []
        self.stats = ReadStats()
        for path in sorted(run.glob("events.out.tfevents.*")):
            columns, _ = read_file_scalars(
                path,
                engine=engine,
                stats=self.stats,
                other=lambda event, *_: self.events.append(event),
                values=values,
            )
            for tag, (steps, _, points) in columns.items():
                self.scalars.setdefault(tag, []).extend(
                    zip(steps.tolist(), points.tolist(), strict=True)
                )

    def of(self, plugin: str, tag: str) -> list[Event]:
        return [e for e in self.events if e.plugin == plugin and e.tag == tag]

    def tags(self) -> set[str]:
        return set(self.scalars) | {e.tag for e in self.events if e.plugin != "graph"}


@pytest.fixture(scope="module")
def torch_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """torch's run and the sub-run its ``add_hparams`` wrote (named by the time)."""
    run = torch_every_method(tmp_path_factory.mktemp("torch"))
    (sub,) = [p for p in run.iterdir() if p.is_dir() and "." in p.name]
    return run, sub


@pytest.fixture(scope="module")
def lightning_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return lightning_tensorboard_run(tmp_path_factory.mktemp("lightning"))


@pytest.fixture(scope="module")
def hf_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    return hf_tensorboard_run(tmp_path_factory.mktemp("hf"))


def assert_as_tensorboard_reads(run: Path, engine: str) -> Read:
    """``run`` read by ``engine`` holds every tag and value TensorBoard's reader finds;
    returns what was read."""
    acc, ours = accumulator(run), Read(run, engine)
    tags = acc.Tags()
    skipped = {t for t in tags["tensors"] if _plugin(acc, t) not in SHOWN_TENSOR_PLUGINS}
    hparams = _plugin_contents(acc, "hparams")
    expected = (
        set(tags["scalars"])
        | set(tags["histograms"])
        | set(tags["images"])
        | set(tags["audio"])
        | set(tags["tensors"]) - skipped
        | set(tags["run_metadata"])
        | set(hparams)
    )
    assert ours.tags() == expected
    for tag in tags["scalars"]:
        assert ours.scalars[tag] == [(e.step, e.value) for e in acc.Scalars(tag)], tag
    for tag in tags["histograms"]:
        for theirs, mine in zip(acc.Histograms(tag), ours.of("histogram", tag), strict=True):
            histo = theirs.histogram_value
            assert mine.step == theirs.step
            assert mine.value.counts.tolist() == list(histo.bucket)
            right = mine.value.left + mine.value.width
            np.testing.assert_allclose(right, list(histo.bucket_limit))
    for tag in tags["images"]:
        for theirs, mine in zip(acc.Images(tag), ours.of("image", tag), strict=True):
            assert (mine.step, mine.value.encoded) == (theirs.step, theirs.encoded_image_string)
    for tag in tags["audio"]:
        for theirs, mine in zip(acc.Audio(tag), ours.of("audio", tag), strict=True):
            clip = mine.value
            assert (mine.step, clip.encoded, clip.content_type) == (
                theirs.step,
                theirs.encoded_audio_string,
                theirs.content_type,
            )
            assert (clip.sample_rate, clip.frames) == (theirs.sample_rate, theirs.length_frames)
    for tag in set(tags["tensors"]) - skipped:
        plugin = SHOWN_TENSOR_PLUGINS[_plugin(acc, tag)]
        for theirs, mine in zip(acc.Tensors(tag), ours.of(plugin, tag), strict=True):
            assert mine.step == theirs.step
            _assert_tensor_value(mine.value, tensor_util.make_ndarray(theirs.tensor_proto))
    for tag, content in hparams.items():
        first = ours.of("hparams", tag)[0].value
        assert first == tensorboard_plugins_pb2.HParamsPluginData.FromString(content)
    graphs = [e.value for e in ours.events if e.plugin == "graph"]
    assert len(graphs) == int(tags["graph"])
    for graph in graphs:  # every GraphDef node, under its own name
        shown = {n.full_name for n in graph.node} | {p.name for p in graph.parameters}
        shown |= {c.key for c in graph.const_vals}
        assert {n.name for n in acc.Graph().node} <= shown
    for tag in tags["run_metadata"]:
        (mine,) = ours.of("run_metadata", tag)
        assert mine.value.SerializeToString() == acc.RunMetadata(tag).SerializeToString()
    assert ours.stats.skipped_plugins == dict(Counter(_plugin(acc, t) for t in skipped))
    assert not ours.stats.damaged
    return ours


def _plugin_contents(acc: Any, plugin: str) -> dict[str, bytes]:
    try:
        return acc.PluginTagToContent(plugin)
    except KeyError:  # no value of that plugin
        return {}


def _plugin(acc: Any, tag: str) -> str:
    return acc.SummaryMetadata(tag).plugin_data.plugin_name


def _assert_tensor_value(mine: Any, reference: np.ndarray) -> None:
    if reference.dtype == object:  # text: a string tensor
        assert mine.shape == reference.shape
        assert list(mine.cells) == [s.decode() for s in reference.reshape(-1)]
    else:
        assert mine.dtype == np.float64
        np.testing.assert_array_equal(mine, reference.astype(np.float64))


def assert_engines_agree(run: Path) -> None:
    """Both engines, converting values or only indexing them, return the same events."""

    def listing(read: Read) -> list[tuple[str, str, int]]:
        return [(e.plugin, e.tag, e.step) for e in read.events]

    reads = [Read(run, engine, values) for engine in ("python", "numba") for values in (1, 0)]
    for read in reads[1:]:
        assert read.scalars == reads[0].scalars
        assert listing(read) == listing(reads[0])
        assert read.stats == reads[0].stats


@pytest.mark.parametrize("engine", ["python", "numba"])
def test_torch_every_method(torch_runs: tuple[Path, Path], engine: str) -> None:
    run, sub = torch_runs
    ours = assert_as_tensorboard_reads(run, engine)
    assert set(ours.stats.skipped_plugins) == TORCH_SKIPPED
    text = ours.of("text", "notes/text_summary")[0].value
    assert text.shape == (1,) and text.cells[0].startswith("# Notes\n\n| lr | acc |")
    assert [e.value.shape for e in ours.of("pr_curve", "pr")] == [(6, 11)] * 3
    (graph,) = [e for e in ours.events if e.plugin == "graph"]
    assert graph.tag.startswith("events.out.tfevents.")
    hparams = assert_as_tensorboard_reads(sub, engine)
    assert hparams.scalars == {"hp/acc": [(0, 0.5)], "hp/loss": [(0, 0.25)]}
    (start,) = hparams.of("hparams", "_hparams_/session_start_info")
    assert start.value.session_start_info.hparams["opt"].string_value == "sgd"


@pytest.mark.parametrize("engine", ["python", "numba"])
def test_lightning(lightning_run: Path, engine: str) -> None:
    ours = assert_as_tensorboard_reads(lightning_run, engine)
    assert ours.stats.skipped_plugins == {}
    assert [e.plugin for e in ours.events if e.plugin in ("graph", "run_metadata")] == [
        "graph",
        "run_metadata",
    ]
    starts = ours.of("hparams", "_hparams_/session_start_info")
    assert starts[-1].value.session_start_info.hparams["batch"].number_value == 8


@pytest.mark.parametrize("engine", ["python", "numba"])
def test_hugging_face(hf_run: Path, engine: str) -> None:
    ours = assert_as_tensorboard_reads(hf_run, engine)
    assert ours.stats.skipped_plugins == {}
    (args,) = ours.of("text", "args/text_summary")
    assert '"report_to"' in args.value.cells[0]
    assert "eval/loss" in ours.scalars


def test_the_engines_agree(
    torch_runs: tuple[Path, Path], lightning_run: Path, hf_run: Path
) -> None:
    pytest.importorskip("numba")
    for run in (*torch_runs, lightning_run, hf_run):
        assert_engines_agree(run)
