"""The runs of the plugin-view browser tests: images, histograms and tensors in both formats.

``write_plugin_base`` fills a base directory with the golden MindSpore runs (every plugin,
graphs, lineage, a dataset graph, landscapes) and two runs ``SummaryRecord`` writes with
scalars, images, histograms and tensors: ``./plug/ms`` (MindSpore format, ranks 0 and 1)
and ``./plug/tb`` (TensorBoard format, no rank). Every value is a function of (step,
rank), so a test knows what any step should show; ``stored_images`` reads back the bytes
of the images as the files hold them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from helpers.board import rank_env
from sumlens import SummaryRecord
from sumlens.io import Image, iter_events
from sumlens.io.naming import file_rank

STEPS = range(1, 13)
IMAGE_TAG = "input/img"
HISTOGRAM_TAGS = ("w", "b")
TENSOR_TAG = "act"
VECTOR_TAG = "bias"
PLUGIN_RUNS = ["./all_plugins", "./collector", "./landscape", "./plug/ms", "./plug/tb"]
"""Every run ``write_plugin_base`` makes, as the server names them."""


def image(step: int, rank: int | None) -> np.ndarray:
    """The NCHW batch in [0, 1) written at ``step``: two 3x6x8 images."""
    rng = np.random.default_rng(step * 10 + (rank or 0))
    return rng.random((2, 3, 6, 8)).astype(np.float32)


def weights(tag: str, step: int, rank: int | None) -> np.ndarray:
    """The values the histogram ``tag`` summarises at ``step``: a widening normal sample."""
    rng = np.random.default_rng(step * 100 + (rank or 0) * 7 + len(tag))
    return (rng.standard_normal(400) * (1 + step / 10) + (rank or 0)).astype(np.float32)


def activation(step: int, rank: int | None) -> np.ndarray:
    """The 2x3x4 tensor ``act`` at ``step`` (exact in float32, quarter steps apart)."""
    return ((np.arange(24) * step + 0.25 * (rank or 0)) - 5.0).reshape(2, 3, 4).astype(np.float32)


def bias(step: int, rank: int | None) -> np.ndarray:
    """The 1-D tensor ``bias`` at ``step``."""
    return (np.linspace(-1.0, 1.0, 5) * step + (rank or 0)).astype(np.float32)


def write_plugin_run(
    directory: Path, fmt: str, rank: int | None = None, steps: range = STEPS
) -> None:
    """One run of every value kind above at ``steps`` (the rank's values when given)."""
    with SummaryRecord(directory, file_format=fmt) as record:
        for step in steps:
            write_step(record, step, rank)


def write_step(record: SummaryRecord, step: int, rank: int | None = None) -> None:
    """Add and record the values of ``step``."""
    record.add_value("scalar", "loss", 1.0 / step)
    record.add_value("scalar", "accuracy", 1.0 - 1.0 / (step + 1))
    record.add_value("image", IMAGE_TAG, image(step, rank))
    for tag in HISTOGRAM_TAGS:
        record.add_value("histogram", tag, weights(tag, step, rank))
    record.add_value("tensor", TENSOR_TAG, activation(step, rank))
    record.add_value("tensor", VECTOR_TAG, bias(step, rank))
    record.record(step)


def write_plugin_base(base: Path, golden_dir: Path) -> None:
    """The runs of ``PLUGIN_RUNS`` under ``base``."""
    for name in ("all_plugins", "collector", "landscape"):
        shutil.copytree(golden_dir / name, base / name)
    for rank in (0, 1):
        with rank_env(rank):
            write_plugin_run(base / "plug" / "ms", "mindspore", rank)
    write_plugin_run(base / "plug" / "tb", "tensorboard")


def stored_images(run_dir: Path, tag: str, rank: int | None) -> dict[int, bytes]:
    """The encoded image of ``tag`` at each step in the files of ``rank`` (None: every file),
    as written; a step written again (a resumed run) keeps its last value."""
    found: dict[int, bytes] = {}
    for path in sorted(run_dir.iterdir()):
        if rank is not None and file_rank(path.name) != rank:
            continue
        for event in iter_events(path):
            if event.plugin == "image" and event.tag == tag and isinstance(event.value, Image):
                found[event.step] = event.value.encoded
    return found
