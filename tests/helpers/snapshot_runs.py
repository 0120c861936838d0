"""Runs for the snapshot tests, written with SummaryRecord: scalars and images."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import sumlens
from sumlens.io import Image, iter_events

IMAGE_TAG = "samples/digit"


def loss(step: np.ndarray, seed: int) -> np.ndarray:
    """The ``loss`` of run ``seed`` at ``step`` (float32, as recorded)."""
    return (1.0 / (1.0 + step / 100.0) + 0.01 * seed + 0.05 * np.sin(step / 7.0)).astype(np.float32)


def write_runs(base: Path, names: list[str], steps: int, image_every: int) -> None:
    """Each run of ``names`` (its index the seed): ``loss`` and ``lr`` at every step of
    ``range(steps)``, an RGB 8x8 image under :data:`IMAGE_TAG` every ``image_every`` steps."""
    rng = np.random.default_rng(0)
    for seed, name in enumerate(names):
        values = loss(np.arange(steps), seed)
        with sumlens.SummaryRecord(str(base / name)) as record:
            for step in range(steps):
                record.add_value("scalar", "loss", values[step])
                record.add_value("scalar", "lr", np.float32(0.1 / (1 + step // 100)))
                if step % image_every == 0:
                    picture = rng.random((1, 3, 8, 8)).astype(np.float32)
                    record.add_value("image", IMAGE_TAG, picture)
                record.record(step)


def written_images(run_dir: Path) -> dict[int, bytes]:
    """The images of run ``run_dir`` as its event files hold them, by step."""
    return {
        event.step: event.value.encoded
        for event in iter_events(run_dir)
        if isinstance(event.value, Image)
    }
