"""Workloads of ``bench_write``: sizes, deterministic data and the timed loop.

Imported by both workers, ``py_write.py`` (the project's .venv: sumlens, torch,
tensorboardX) and ``ms_write.py`` (the MindSpore venv), so it needs nothing but numpy, the
standard library and the harness's clock. Every worker builds the same data from the same
seeds.

A worker serves jobs, one JSON object per line on stdin, and answers each with one
line ``@@RESULT {json}`` on stdout (other libraries may print to stdout too; the
orchestrator ignores every line without the marker).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from benchmarks.harness.clock import now

RESULT_MARKER = "@@RESULT "
SEED = 20240611
POOL = 8
"""Distinct histogram arrays / image batches, cycled over the steps (memory stays small)."""
TENSOR_POOL = 1024
"""Distinct 0-d tensors, cycled over the steps of the tensor-scalar workload."""
HIST_SIZE = 1_000_000
IMAGE_SHAPE = (4, 3, 224, 224)


@dataclass(frozen=True)
class Workload:
    name: str
    kind: str  # scalar | histogram | image
    full_steps: int
    per_step: int = 1  # values per step
    variant: str = ""  # float | tensor | noise | natural
    title: str = ""


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("scalar1_float", "scalar", 100_000, 1, "float", "100k steps x 1 scalar (float)"),
        Workload(
            "scalar1_tensor", "scalar", 100_000, 1, "tensor", "100k steps x 1 scalar (0-d tensor)"
        ),
        Workload("scalar10", "scalar", 20_000, 10, "float", "20k steps x 10 scalars (float)"),
        Workload("histogram", "histogram", 200, 1, "", "200 histograms of 1M float32"),
        Workload("image_noise", "image", 100, 1, "noise", "100 image batches 4x3x224x224, noise"),
        Workload(
            "image_natural", "image", 100, 1, "natural", "100 image batches 4x3x224x224, natural"
        ),
    )
}


def scaled_steps(workload: Workload, scale: float) -> int:
    """Steps of ``workload`` at ``scale`` (at least 4, so warm-up effects stay visible)."""
    return max(4, round(workload.full_steps * scale))


# ---- data ---------------------------------------------------------------------------------


def scalar_values(steps: int, per_step: int) -> np.ndarray:
    """float64 values, shape (steps, per_step): a decaying noisy loss curve."""
    rng = np.random.default_rng(SEED)
    trend = np.exp(-np.arange(steps) / max(1, steps / 4))[:, None]
    return trend + 0.05 * rng.standard_normal((steps, per_step))


def histogram_arrays() -> list[np.ndarray]:
    """``POOL`` float32 arrays of ``HIST_SIZE`` values, each a differently shifted normal."""
    rng = np.random.default_rng(SEED + 1)
    return [
        (rng.standard_normal(HIST_SIZE, dtype=np.float32) * (1 + k / 4) + k / 2).astype(np.float32)
        for k in range(POOL)
    ]


def noise_batches() -> list[np.ndarray]:
    """``POOL`` NCHW float32 batches of uniform noise in [0, 1)."""
    rng = np.random.default_rng(SEED + 2)
    return [rng.random(IMAGE_SHAPE, dtype=np.float32) for _ in range(POOL)]


def natural_image(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """A CHW float32 picture in [0, 1]: smooth gradients, shaded discs, boxes, faint grain."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    y /= height - 1
    x /= width - 1
    channels = []
    for _ in range(3):
        a, b, c = rng.uniform(-0.6, 0.6, 3)
        channels.append(0.5 + a * x + b * y + c * x * y)
    picture = np.stack(channels)
    for _ in range(rng.integers(3, 7)):  # shaded discs
        cy, cx = rng.uniform(0.1, 0.9, 2)
        radius = rng.uniform(0.05, 0.25)
        dist = np.sqrt((y - cy) ** 2 + (x - cx) ** 2)
        inside = dist < radius
        shade = 1 - 0.6 * (dist / radius)
        color = rng.uniform(0, 1, 3).astype(np.float32)
        for ch in range(3):
            picture[ch][inside] = (color[ch] * shade)[inside]
    for _ in range(rng.integers(2, 5)):  # flat boxes
        y0, x0 = rng.integers(0, height - 20), rng.integers(0, width - 20)
        h, w = rng.integers(10, height // 3), rng.integers(10, width // 3)
        color = rng.uniform(0, 1, 3).astype(np.float32)
        picture[:, y0 : y0 + h, x0 : x0 + w] = color[:, None, None]
    picture += rng.normal(0, 0.01, picture.shape).astype(np.float32)  # sensor grain
    return np.clip(picture, 0, 1).astype(np.float32)


def natural_batches() -> list[np.ndarray]:
    """``POOL`` NCHW float32 batches of :func:`natural_image` pictures."""
    rng = np.random.default_rng(SEED + 3)
    n, _, height, width = IMAGE_SHAPE
    return [np.stack([natural_image(rng, height, width) for _ in range(n)]) for _ in range(POOL)]


def workload_data(workload: Workload, steps: int) -> object:
    """The numpy data of ``workload`` (built fresh: callers cache it)."""
    if workload.kind == "scalar":
        return scalar_values(steps, workload.per_step)
    if workload.kind == "histogram":
        return histogram_arrays()
    if workload.variant == "noise":
        return noise_batches()
    return natural_batches()


# ---- the timed run ---------------------------------------------------------------------------


@dataclass
class Writer:
    """What a contender provides for one run.

    ``open()`` makes the writer (timed), ``step(i, value)`` logs step ``i`` (its time is the
    caller time), ``close()`` returns once everything is written (timed). ``values[i]`` is
    what ``step`` gets; it is picked before the caller clock starts.
    """

    open: Callable[[], None]
    step: Callable[[int, object], None]
    close: Callable[[], None]
    values: Callable[[int], object]


def timed_run(writer: Writer, steps: int) -> dict[str, float]:
    """Open, ``steps`` steps, close; wall times of each phase and the caller-thread sum."""
    pc = now
    step, value_of = writer.step, writer.values
    start = pc()
    writer.open()
    opened = pc()
    caller = 0.0
    for i in range(steps):
        value = value_of(i)
        t0 = pc()
        step(i, value)
        caller += pc() - t0
    looped = pc()
    writer.close()
    end = pc()
    return {
        "open": opened - start,
        "loop": looped - opened,
        "close": end - looped,
        "total": end - start,
        "caller": caller,
    }


def dir_listing(log_dir: str) -> dict[str, int]:
    """File name -> size of everything under ``log_dir`` (relative names)."""
    out = {}
    for root, _, files in os.walk(log_dir):
        for name in files:
            path = os.path.join(root, name)
            out[os.path.relpath(path, log_dir)] = os.path.getsize(path)
    return out


def serve(make_writer: Callable[[dict, str], tuple[Writer, int]]) -> None:
    """Answer jobs from stdin until EOF; ``make_writer(job, log_dir)`` builds a run.

    A job: ``{"contender", "workload", "steps", "log_dir", "params", "warm_dir"}``. The
    first job of a (contender, workload) pair first runs 2 untimed steps into
    ``warm_dir`` (libraries load lazily, numba fills its cache, pools start) and then the
    timed run into ``log_dir``; the result reports the phase times and the files written.
    """
    warmed: set[tuple[str, str, str]] = set()
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        try:
            key = (job["contender"], job["workload"], json.dumps(job.get("params", {})))
            if key not in warmed:
                warm_dir = tempfile.mkdtemp(prefix="warm-", dir=job["warm_dir"])
                writer, _ = make_writer({**job, "steps": 2}, warm_dir)
                timed_run(writer, 2)
                shutil.rmtree(warm_dir, ignore_errors=True)
                warmed.add(key)
            writer, steps = make_writer(job, job["log_dir"])
            # Each run starts from a collected heap: a full collection (~0.1 s in a process
            # holding torch) then falls in a run only when its own allocations call for one,
            # not when earlier jobs left the collector just short of it.
            gc.collect()
            result = timed_run(writer, steps)
            result["steps"] = steps
            result["files"] = dir_listing(job["log_dir"])
        except Exception:
            result = {"error": traceback.format_exc()}
        sys.stdout.write(RESULT_MARKER + json.dumps(result) + "\n")
        sys.stdout.flush()
