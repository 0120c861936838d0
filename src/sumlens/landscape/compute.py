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

from sumlens._landscape_settings import check_landscape_size, check_num_samples, check_unit
from sumlens._log import logger
from sumlens.landscape import directions, grid
from sumlens.landscape.backend import Backend
from sumlens.landscape.builder import LossLandscape
from sumlens.landscape.cache import BlockCache, cache_key
from sumlens.landscape.evaluate import EvalOptions
from sumlens.landscape.placement import open_backend
from sumlens.landscape.plane import Plane

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


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """Where and how a landscape's points are evaluated, checked once.

    The keywords :func:`compute_landscape` and
    ``SummaryLandscape.gen_landscapes_with_multi_process`` share (each is described at
    :func:`compute_landscape`); :meth:`from_keywords` builds it from theirs.
    """

    normalization: str = "tensor"
    seed: int = 0
    train_mode: bool = False
    num_workers: int | None = None
    ray_address: str | None = None
    block_points: int | None = None
    points_per_pass: int | None = None
    samples_per_pass: int | None = None
    memory_budget: int | None = None
    onednn: bool | None = None
    on_block: OnBlock | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        if self.normalization not in directions.NORMALIZATIONS:
            raise ValueError(
                f"normalization must be one of {directions.NORMALIZATIONS}, "
                f"got {self.normalization!r}"
            )
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be an int >= 0, got {seed!r}")
        if not isinstance(self.train_mode, bool):
            raise TypeError(f"train_mode must be a bool, got {self.train_mode!r}")
        if self.onednn is not None and not isinstance(self.onednn, bool):
            raise TypeError(
                f"onednn must be None (timed choice), True or False, got {self.onednn!r}"
            )
        for name in COUNTS:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int or None, got {value!r}")
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")

    @classmethod
    def from_keywords(cls, function: str, keywords: Mapping[str, Any]) -> RunOptions:
        """The options among ``function``'s keyword arguments (any other is a TypeError)."""
        unknown = sorted(set(keywords) - {field.name for field in dataclasses.fields(cls)})
        if unknown:
            raise TypeError(f"{function}() got unexpected keyword arguments {unknown}")
        return cls(**keywords)

    def eval_options(self) -> EvalOptions:
        """What the evaluators take (see :class:`~sumlens.landscape.evaluate.EvalOptions`)."""
        return EvalOptions(
            self.train_mode,
            self.seed,
            self.points_per_pass,
            self.samples_per_pass,
            self.memory_budget,
            self.onednn,
        )


COUNTS = ("num_workers", "block_points", "points_per_pass", "samples_per_pass", "memory_budget")
"""Options that are an int >= 1 or None."""


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
    run: RunOptions,
    *,
    unit: str,
    step_per_epoch: int | None,
    device_ids: Sequence[int] | None,
    cache_root: str | None,
) -> Iterator[LandscapeRunner]:
    """A :class:`LandscapeRunner` on a backend for ``source`` (closed on leaving)."""
    options = run.eval_options()
    backend = open_backend(
        source,
        num_samples,
        options,
        device_ids=device_ids,
        num_workers=run.num_workers,
        ray_address=run.ray_address,
    )
    try:
        yield LandscapeRunner(
            backend,
            PlaneSettings(run.normalization, run.seed, unit, step_per_epoch),
            cache_root=cache_root,
            key_settings=key_settings(run.normalization, num_samples, options),
            block_points=run.block_points,
            on_block=run.on_block,
            progress=run.progress,
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
    device_ids: Sequence[int] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    **options: Any,
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
        device_ids: CUDA device ids, one worker each (see ``num_workers``).
        cache_dir: keep finished blocks here, so a rerun resumes (None: no cache).

    Keyword options (:class:`RunOptions`, shared with ``SummaryLandscape``):
        normalization: ``"tensor"`` (MindSpore, default), ``"filter"`` (Li et al.) or
            ``"none"``.
        seed: seeds the random directions, randomized PCA and train-mode dropout (0).
        train_mode: score with the network in train mode (batch statistics, dropout;
            default False).
        num_workers, ray_address: where to evaluate with ``device_ids`` (see
            :func:`sumlens.landscape.placement.open_backend`); default: this process.
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
    run = RunOptions.from_keywords("compute_landscape", options)
    snapshots = [numpy_state(state) for state in states]
    needed = 3 if kind == "train" else 1
    if len(snapshots) < needed:
        raise ValueError(f"kind={kind!r} needs at least {needed} states, got {len(snapshots)}")
    labels = list(range(1, len(snapshots) + 1)) if intervals is None else list(intervals)
    if len(labels) != len(snapshots):
        raise ValueError(f"intervals has {len(labels)} entries for {len(snapshots)} states")
    with open_runner(
        objective,
        samples,
        run,
        unit=unit,
        step_per_epoch=step_per_epoch,
        device_ids=device_ids,
        cache_root=None if cache_dir is None else os.fspath(cache_dir),
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
