"""The plugin run of ``bench_board``'s table (c): images and histograms at a real scale.

One MindSpore summary file, as ``SummaryRecord`` writes it (one event per step holding that
step's every value): 1,000 steps x (2 scalar tags, 20 image tags of 64x64 RGB PNGs, 500
histogram tags of 30 buckets). The PNGs come from a pool of distinct noisy gradients
encoded once (encoding 20,000 PNGs would dominate the generation and measure Pillow);
the histograms are those of a normal sample whose spread drifts with the step, so every
record differs.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from PIL import Image

from benchmarks.datasets import STEP_SECONDS, WALL0
from sumlens._proto import summary_pb2
from sumlens.io import RecordWriter

PNG_POOL = 64
"""Distinct images encoded; record (tag, step) shows ``pool[(7 * tag + step) % PNG_POOL]``."""


@dataclass(frozen=True)
class PluginShape:
    """Sizes of the plugin run (the issue's row: 1,000 steps x 20 image and 500 histogram tags)."""

    steps: int = 1_000
    image_tags: int = 20
    histogram_tags: int = 500
    image_side: int = 64
    buckets: int = 30

    def tags(self) -> dict[str, list[str]]:
        """Tags per plugin, as the file names them (MindSpore's ``[image]`` style suffixes)."""
        return {
            "scalar": ["loss[:Scalar]", "lr[:Scalar]"],
            "image": [f"input_{i:02d}[:Image]" for i in range(self.image_tags)],
            "histogram": [f"layer{i:03d}.weight[:Histogram]" for i in range(self.histogram_tags)],
        }


def png_pool(side: int, seed: int) -> list[bytes]:
    """``PNG_POOL`` distinct ``side`` x ``side`` RGB PNGs (gradients plus noise)."""
    rng = np.random.default_rng(seed)
    ramp = np.linspace(0, 255, side, dtype=np.float64)
    pool = []
    for k in range(PNG_POOL):
        flat = np.full((side, side), 2.0 * k)
        base = np.stack([np.tile(ramp, (side, 1)), np.tile(ramp[:, None], (1, side)), flat], -1)
        pixels = np.clip(base + rng.normal(0, 24, (side, side, 3)), 0, 255).astype(np.uint8)
        out = io.BytesIO()
        Image.fromarray(pixels, "RGB").save(out, format="PNG")
        pool.append(out.getvalue())
    return pool


def write_plugin_run(path: str, shape: PluginShape, seed: int) -> None:
    """Write the plugin run's one summary file at ``path``."""
    rng = np.random.default_rng(seed)
    pool = png_pool(shape.image_side, seed)
    tags = shape.tags()
    edges = np.linspace(-4.0, 4.0, shape.buckets + 1)
    width = float(edges[1] - edges[0])
    sample = 4_096
    with RecordWriter(path) as writer:
        head = summary_pb2.Event(wall_time=WALL0, version="MindSpore.Event:1")
        writer.write(head.SerializeToString())
        for step in range(shape.steps):
            event = summary_pb2.Event(wall_time=WALL0 + step * STEP_SECONDS, step=step)
            values = event.summary.value
            values.add(tag=tags["scalar"][0], scalar_value=float(np.exp(-step / 300)))
            values.add(tag=tags["scalar"][1], scalar_value=0.1 * 0.99 ** (step // 10))
            for i, tag in enumerate(tags["image"]):
                image = values.add(tag=tag).image
                image.height = image.width = shape.image_side
                image.colorspace = 3
                image.encoded_image = pool[(7 * i + step) % PNG_POOL]
            spread = 1.0 + step / shape.steps
            draws = rng.normal(0.0, spread, (len(tags["histogram"]), sample))
            for tag, drawn in zip(tags["histogram"], draws, strict=True):
                counts, _ = np.histogram(drawn, bins=edges)
                histogram = values.add(tag=tag).histogram
                for left, count in zip(edges[:-1].tolist(), counts.tolist(), strict=True):
                    histogram.buckets.add(left=left, width=width, count=count)
                histogram.min = float(drawn.min())
                histogram.max = float(drawn.max())
                histogram.sum = float(drawn.sum())
                histogram.count = sample
            writer.write(event.SerializeToString())
