"""Landscapes from snapshots: plane, grid, block-wise evaluation, the ``LossLandscape`` value.

:class:`LandscapeRunner` is shared by :class:`~sumlens.landscape.SummaryLandscape` (which
reads the snapshots SummaryCollector saved) and :func:`compute_landscape` (for a training
loop of your own: pass the state dicts you kept). The parent process does the linear
algebra (PCA, projection, normalisation: cheap next to the losses); a backend evaluates
the points block by block; every finished block goes to the cache before it is reported,
so an interruption at any moment loses at most the blocks still running.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from sumlens._log import logger
from sumlens.landscape import directions, grid
from sumlens.landscape.builder import LossLandscape
from sumlens.landscape.cache import BlockCache, cache_key
from sumlens.landscape.evaluate import EvalOptions
from sumlens.landscape.metadata import check_landscape_size, check_num_samples, check_unit
from sumlens.landscape.plane import Plane
from sumlens.landscape.workers import Backend, open_backend

KINDS = ("train", "result")


@dataclasses.dataclass(frozen=True)
class BlockDone:
    """Reported to ``on_block`` after each block: taken from the cache or just evaluated."""

    tag: str
    block: int
    blocks: int
    start: int
    stop: int
    cached: bool


OnBlock = Callable[[BlockDone], None]


def numpy_state(state: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """A snapshot as numpy arrays: floating entries as float32 (what the network is scored
    with, as in MindSpore), other tensors as they are; non-tensor entries are dropped."""
    out = {}
    for name, value in state.items():
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu()
            out[name] = (value.float() if value.is_floating_point() else value).numpy()
        elif isinstance(value, np.ndarray):
            floating = np.issubdtype(value.dtype, np.floating)
            out[name] = value.astype(np.float32) if floating else value
    return out


def check_normalization(value: object) -> str:
    if value not in directions.NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {directions.NORMALIZATIONS}, got {value!r}")
    return str(value)


def check_seed(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"seed must be an int >= 0, got {value!r}")
    return value


def eval_options(
    train_mode: object,
    seed: int,
    points_per_pass: object,
    samples_per_pass: object,
    memory_budget: object,
    onednn: object,
) -> EvalOptions:
    """Checked evaluation options (see :class:`~sumlens.landscape.evaluate.EvalOptions`)."""
    if not isinstance(train_mode, bool):
        raise TypeError(f"train_mode must be a bool, got {train_mode!r}")
    if onednn is not None and not isinstance(onednn, bool):
        raise TypeError(f"onednn must be None (timed choice), True or False, got {onednn!r}")
    return EvalOptions(
        train_mode,
        seed,
        _positive_or_none(points_per_pass, "points_per_pass"),
        _positive_or_none(samples_per_pass, "samples_per_pass"),
        _positive_or_none(memory_budget, "memory_budget"),
        onednn,
    )


def _positive_or_none(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int or None, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


@dataclasses.dataclass(frozen=True)
class PlaneSettings:
    """How a run's planes are drawn and labelled (the same for each landscape of a run)."""

    normalization: str
    seed: int
    unit: str
    step_per_epoch: int | None


class LandscapeRunner:
    """Evaluates planes on one backend with a block cache, progress and ``on_block`` reports."""

    def __init__(
        self,
        backend: Backend,
        plane: PlaneSettings,
        *,
        cache_root: str | None,
        key_settings: dict[str, Any],
        block_points: int | None = None,
        on_block: OnBlock | None = None,
        progress: bool = True,
    ) -> None:
        if block_points is not None and (
            isinstance(block_points, bool) or not isinstance(block_points, int) or block_points < 1
        ):
            raise ValueError(f"block_points must be an int >= 1 or None, got {block_points!r}")
        self.backend = backend
        self.plane = plane
        self.cache_root = cache_root
        self.key_settings = dict(key_settings)
        self.block_points = block_points
        self.on_block = on_block
        self.progress = progress
        self._fingerprint: str | None = None

    def evaluate(self, tag: str, plane: Plane, points: np.ndarray) -> np.ndarray:
        """Heights at ``points`` (P x 2), from the cache where possible."""
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        if self._fingerprint is None:
            self._fingerprint = self.backend.fingerprint()
        size = self.block_points or grid.default_block_points(len(points))
        settings = {**self.key_settings, "samples": self._fingerprint, "block_points": size}
        key = cache_key(plane.digest(), points, settings)
        cache = BlockCache(self.cache_root, key, {"tag": tag, "points": len(points), **settings})
        ranges = grid.blocks(len(points), size)
        heights = np.empty(len(points))
        tasks = []
        bar = Progress(
            f"[bold]{tag}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            disable=not self.progress,
        )
        with bar:
            task = bar.add_task(tag, total=len(ranges))
            for block, (start, stop) in enumerate(ranges):
                saved = cache.get(block, stop - start)
                if saved is None:
                    tasks.append((block, start, points[start:stop]))
                    continue
                heights[start:stop] = saved
                bar.advance(task)
                self._report(tag, block, ranges, cached=True)
            for block, values in self.backend.run(plane, key, tasks):
                start, stop = ranges[block]
                heights[start:stop] = values
                cache.put(block, values)
                bar.advance(task)
                self._report(tag, block, ranges, cached=False)
        logger.info(
            "%s: %d of %d blocks evaluated, %d from the cache",
            tag,
            len(tasks),
            len(ranges),
            len(ranges) - len(tasks),
        )
        return heights

    def _report(self, tag: str, block: int, ranges: list[tuple[int, int]], *, cached: bool) -> None:
        if self.on_block is not None:
            start, stop = ranges[block]
            self.on_block(BlockDone(tag, block, len(ranges), start, stop, cached))

    def train_landscape(
        self, snapshots: Sequence[Mapping[str, np.ndarray]], intervals: Sequence[int], size: int
    ) -> LossLandscape:
        """The PCA plane through ``snapshots`` with the path of their projections."""
        settings = self.plane
        v, w, coords = directions.pca_plane(snapshots, settings.normalization, settings.seed)
        plane = Plane.create(snapshots[-1], v, w)
        x_axis = grid.path_axis(coords[:, 0], size)
        y_axis = grid.path_axis(coords[:, 1], size)
        points = np.vstack([grid.grid_points(x_axis, y_axis), coords])
        tag = f"landscape_{[intervals[0], intervals[-1]]}"
        heights = self.evaluate(tag, plane, points)
        path_z = heights[size * size :]
        return LossLandscape(
            x=x_axis,
            y=y_axis,
            z=heights[: size * size].reshape(size, size),
            intervals=list(intervals),
            path=(coords[:, 0], coords[:, 1], path_z),
            convergence_point=(0.0, 0.0, float(path_z[-1])),
            decomposition="PCA",
            unit=settings.unit,
            step_per_epoch=settings.step_per_epoch,
        )

    def result_landscape(
        self, snapshot: Mapping[str, np.ndarray], final: int, size: int
    ) -> LossLandscape:
        """Random directions around ``snapshot`` over [-1, 1] x [-1, 1]."""
        settings = self.plane
        v, w = directions.random_plane(snapshot, settings.normalization, settings.seed)
        axis = grid.result_axis(size)
        heights = self.evaluate(
            f"landscape_{[final]}", Plane.create(snapshot, v, w), grid.grid_points(axis, axis)
        )
        z = heights.reshape(size, size)
        return LossLandscape(
            x=axis,
            y=axis,
            z=z,
            convergence_point=grid.result_convergence(axis, axis, z),
            decomposition="Random",
            unit=settings.unit,
            step_per_epoch=settings.step_per_epoch,
        )


@contextlib.contextmanager
def open_runner(
    source: Any,
    num_samples: int | None,
    options: EvalOptions,
    plane: PlaneSettings,
    *,
    device_ids: Sequence[int] | None,
    num_workers: int | None,
    ray_address: str | None,
    cache_root: str | None,
    block_points: int | None,
    on_block: OnBlock | None,
    progress: bool,
) -> Iterator[LandscapeRunner]:
    """A :class:`LandscapeRunner` on a backend for ``source`` (closed on leaving)."""
    backend = open_backend(
        source,
        num_samples,
        options,
        device_ids=device_ids,
        num_workers=num_workers,
        ray_address=ray_address,
    )
    try:
        yield LandscapeRunner(
            backend,
            plane,
            cache_root=cache_root,
            key_settings=key_settings(plane.normalization, num_samples, options),
            block_points=block_points,
            on_block=on_block,
            progress=progress,
        )
    finally:
        backend.close()


def compute_landscape(
    states: Sequence[Mapping[str, Any]],
    objective: Callable[[], Sequence[Any]] | Sequence[Any],
    *,
    kind: str = "train",
    landscape_size: int = 40,
    num_samples: int | None = None,
    intervals: Sequence[int] | None = None,
    unit: str = "step",
    step_per_epoch: int | None = None,
    normalization: str = "tensor",
    seed: int = 0,
    train_mode: bool = False,
    num_workers: int | None = None,
    device_ids: Sequence[int] | None = None,
    ray_address: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    block_points: int | None = None,
    points_per_pass: int | None = None,
    samples_per_pass: int | None = None,
    memory_budget: int | None = None,
    onednn: bool | None = None,
    on_block: OnBlock | None = None,
    progress: bool = True,
) -> LossLandscape:
    """One loss landscape from state dicts you kept, without SummaryCollector.

    Args:
        states: ``network.state_dict()`` snapshots in training order (tensors or arrays).
            ``kind="train"``: at least 3; the plane goes through them by PCA and the
            last one is its origin. ``kind="result"``: the last one is the centre of
            a plane of two random directions.
        objective: ``(network, dataset, loss_fn)`` (or MindSpore's ``(model, network,
            dataset, metrics)``), or a zero-argument function returning it, which
            several workers need (a module-level function: each worker calls it).
            The height of a point is the mean over batches of ``loss_fn(network(inputs),
            label)``.
        kind: ``"train"`` or ``"result"``.
        landscape_size: points per axis (3 to 256).
        num_samples: score the first ``num_samples // batch_size`` batches (None: all).
        intervals: the step/epoch number of each state, for the path (default 1, 2, ...).
        unit, step_per_epoch: recorded with the landscape for the viewer.
        normalization: ``"tensor"`` (MindSpore), ``"filter"`` (Li et al.) or ``"none"``.
        seed: seeds the random directions, randomized PCA and train-mode dropout.
        train_mode: score with the network in train mode (batch statistics, dropout).
        num_workers, device_ids, ray_address: where to evaluate (see
            :func:`sumlens.landscape.workers.open_backend`); default: this process.
        cache_dir: keep finished blocks here, so a rerun resumes (None: no cache).
        block_points: points per block (default: about 64 blocks).
        points_per_pass, samples_per_pass, memory_budget, onednn: speed knobs, see
            :class:`~sumlens.landscape.evaluate.EvalOptions` (none changes a height
            beyond float rounding; ``points_per_pass=1, onednn=False`` skips the timed
            probes that otherwise choose the fastest way).
        on_block: called with a :class:`BlockDone` after every block.
        progress: show a progress bar.

    Returns:
        A :class:`~sumlens.landscape.LossLandscape`, ready for
        ``SummaryRecord.add_value("landscape", tag, value)``.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    size = check_landscape_size(landscape_size)
    samples = None if num_samples is None else check_num_samples(num_samples)
    unit = check_unit(unit)
    normalization = check_normalization(normalization)
    seed = check_seed(seed)
    options = eval_options(
        train_mode, seed, points_per_pass, samples_per_pass, memory_budget, onednn
    )
    snapshots = [numpy_state(state) for state in states]
    needed = 3 if kind == "train" else 1
    if len(snapshots) < needed:
        raise ValueError(f"kind={kind!r} needs at least {needed} states, got {len(snapshots)}")
    labels = list(range(1, len(snapshots) + 1)) if intervals is None else list(intervals)
    if len(labels) != len(snapshots):
        raise ValueError(f"intervals has {len(labels)} entries for {len(snapshots)} states")
    plane = PlaneSettings(normalization, seed, unit, step_per_epoch)
    with open_runner(
        objective,
        samples,
        options,
        plane,
        device_ids=device_ids,
        num_workers=num_workers,
        ray_address=ray_address,
        cache_root=None if cache_dir is None else os.fspath(cache_dir),
        block_points=block_points,
        on_block=on_block,
        progress=progress,
    ) as runner:
        if kind == "train":
            return runner.train_landscape(snapshots, labels, size)
        return runner.result_landscape(snapshots[-1], labels[-1], size)


def key_settings(
    normalization: str, num_samples: int | None, options: EvalOptions
) -> dict[str, Any]:
    """The settings besides plane and points that a cached block depends on."""
    return {
        "normalization": normalization,
        "num_samples": num_samples,
        "train_mode": options.train_mode,
        "seed": options.seed,
    }
