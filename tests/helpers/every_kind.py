"""A base directory holding every kind of data the dashboard has a view for, in runs whose
update times are set, so which run is the most recently updated holding each kind is known.

``write_every_kind`` copies the golden MindSpore runs ``all_plugins`` and ``landscape``
(graphs, images, histograms, tensors, scalars, loss landscapes) and makes them the oldest,
then writes, each newer than the one before: ``./recent/plug`` (``SummaryRecord``:
scalars, images, histograms, tensors), ``./recent/torch`` (torch's ``SummaryWriter``: a
scalar, a text, an audio clip, a PR curve, an embedding and a graph) and ``./recent/land``
(a loss landscape, nothing else). ``NEWEST`` names, for each kind, the run a view shows
while nothing is selected.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import numpy as np

from helpers.graph_data import Net
from helpers.landscape_page import ours, write_landscapes
from helpers.plugin_data import write_plugin_run

OLD = ["./golden/all_plugins", "./golden/landscape"]
RECENT = ["./recent/plug", "./recent/torch", "./recent/land"]
"""Oldest first: each run's files are given a later update time than the one before."""
EVERY_KIND_RUNS = OLD + RECENT
NEWEST = {
    "graph": "./recent/torch",  # newer than the golden runs' graphs
    "landscape": "./recent/land",  # newer than the golden landscape run
    "data": "./recent/land",  # the newest run of all
}
OLD_MTIME = 1_000_000_000  # 2001


def _write_torch(directory: Path) -> None:
    """A run of torch's own writer with a value of each of its other kinds."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    rng = np.random.default_rng(0)
    with SummaryWriter(str(directory)) as writer:
        for step in (0, 1):
            writer.add_scalar("loss", 1.0 / (step + 1), step)
            writer.add_text("notes", f"**step {step}**", step)
            clip = torch.sin(torch.arange(400.0) * (step + 1) / 10)
            writer.add_audio("clip", clip, step, sample_rate=8000)
            labels = rng.integers(0, 2, 40)
            writer.add_pr_curve("cat", labels, rng.uniform(size=40), step, num_thresholds=11)
        vectors = torch.from_numpy(rng.normal(size=(20, 4)).astype(np.float32))
        writer.add_embedding(vectors, metadata=[f"p{i}" for i in range(20)], tag="points")
        writer.add_graph(Net().eval(), torch.rand(1, 3, 8, 8))


def _touch(run: Path, mtime: float) -> None:
    """Set the update time of every file of ``run`` (what /runs calls ``updated``)."""
    for path in run.rglob("*"):
        if path.is_file():
            os.utime(path, (mtime, mtime))


def write_every_kind(base: Path, golden_dir: Path) -> None:
    """The runs of ``EVERY_KIND_RUNS`` under ``base``, updated in that order."""
    for run in OLD:
        shutil.copytree(golden_dir / Path(run).name, base / run)
        _touch(base / run, OLD_MTIME)
    write_plugin_run(base / RECENT[0], "mindspore", steps=range(1, 4))
    _write_torch(base / RECENT[1])
    land = [ours([1, 2, 3]), ours(None)]
    write_landscapes(base / RECENT[2], [(value.default_tag(5), value) for value in land])
    now = time.time()
    for age, run in enumerate(reversed(RECENT)):
        _touch(base / run, now - 60 * (age + 1))
