"""``SummaryLandscape``: loss landscapes from the weights a SummaryCollector saved (seed 003).

MindSpore's API, with what made it hard to use taken out (spec landscape.md, "[OURS]"):
one worker runs in the calling process with no ``__main__`` guard and no Linux-only
rule; the read-only ``train_metadata.json`` is never rewritten; random directions and
randomized PCA are seeded, so a landscape is reproducible; results are cached per
block under ``ckpt_dir``, so a rerun after an interruption resumes; and every landscape
is also returned as a :class:`~sumlens.landscape.LossLandscape`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from sumlens._log import logger
from sumlens.landscape.builder import LossLandscape
from sumlens.landscape.compute import (
    LandscapeRunner,
    OnBlock,
    PlaneSettings,
    check_normalization,
    check_seed,
    eval_options,
    numpy_state,
    open_runner,
)
from sumlens.landscape.metadata import LandscapeSettings, check_overrides, load_settings

MAX_DIR_LENGTH = 1024
CACHE_DIR = "landscape_cache"


def _directory(value: object, name: str) -> str:
    """``value`` as a real path: a non-blank str or path, not too long, not a file."""
    if not isinstance(value, str | os.PathLike):
        raise TypeError(f"{name} must be a str or path, got {type(value).__name__} {value!r}")
    text = os.fspath(value)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name}={value!r} must not be empty or blank")
    path = os.path.realpath(text)
    if len(path) > MAX_DIR_LENGTH:
        raise ValueError(f"{name}={text!r} is longer than {MAX_DIR_LENGTH} characters")
    if os.path.exists(path) and not os.path.isdir(path):
        raise NotADirectoryError(f"{name}={text!r} exists and is not a directory")
    return path


class SummaryLandscape:
    """Loss landscapes of a run recorded with ``SummaryCollector(collect_landscape=...)``.

    ``summary_dir`` is the collector's directory; the weights and ``train_metadata.json``
    are in its ``ckpt_dir`` (created if missing).
    """

    def __init__(self, summary_dir: str | os.PathLike[str]) -> None:
        self.summary_dir = _directory(summary_dir, "summary_dir")
        self.ckpt_dir = os.path.join(self.summary_dir, "ckpt_dir")
        os.makedirs(self.ckpt_dir, exist_ok=True)

    def clean_ckpt(self) -> None:
        """Delete ``ckpt_dir`` (weights, metadata and cached blocks), ignoring errors."""
        shutil.rmtree(self.ckpt_dir, ignore_errors=True)

    def gen_landscapes_with_multi_process(
        self,
        callback_fn: Callable[[], Sequence[Any]],
        collect_landscape: dict[str, Any] | None = None,
        device_ids: list[int] | None = None,
        output: str | os.PathLike[str] | None = None,
        *,
        num_workers: int | None = None,
        ray_address: str | None = None,
        normalization: str = "tensor",
        seed: int = 0,
        train_mode: bool = False,
        block_points: int | None = None,
        points_per_pass: int | None = None,
        samples_per_pass: int | None = None,
        memory_budget: int | None = None,
        onednn: bool | None = None,
        on_block: OnBlock | None = None,
        progress: bool = True,
    ) -> list[LossLandscape]:
        """Compute the landscapes of ``train_metadata.json`` and write them to ``output``.

        Args:
            callback_fn: zero-argument function returning ``(model, network, dataset,
                metrics)`` -- a :class:`sumlens.Model` built on ``network`` with a loss
                function, the network to load weights into, batches of (inputs, label),
                a dict with ``"Loss"`` -- or ``(network, dataset, loss_fn)``. Called
                once per worker; several workers need it at module level.
            collect_landscape: overrides of ``landscape_size``, ``unit``,
                ``num_samples``, ``create_landscape`` (both keys) and ``intervals``,
                applied in memory only.
            device_ids: CUDA device ids, one worker each; on CPU, n ids mean n worker
                processes. None or one id: in this process.
            output: directory of the landscape summary file (default ``summary_dir``).
            num_workers: worker processes on CPU (instead of ``device_ids``), or Ray
                actors with ``ray_address``.
            ray_address: run the blocks as Ray tasks (``"auto"``, ``"ray://..."``;
                an already initialised Ray is used as it is).
            normalization: ``"tensor"`` (MindSpore, default), ``"filter"`` (Li et
                al.) or ``"none"``.
            seed: seeds random directions, randomized PCA and train-mode dropout.
            train_mode: score in train mode (MindSpore's choice; default eval mode).
            block_points, points_per_pass, samples_per_pass, memory_budget, onednn,
                on_block, progress: see :func:`sumlens.landscape.compute_landscape`.

        Returns:
            The landscapes in the order written: every train (PCA) landscape in
            interval order, then the result (random) one.
        """
        if not callable(callback_fn):
            raise TypeError(f"callback_fn must be a function, got {type(callback_fn).__name__}")
        output_dir = self.summary_dir if output is None else _directory(output, "output")
        normalization = check_normalization(normalization)
        seed = check_seed(seed)
        options = eval_options(
            train_mode, seed, points_per_pass, samples_per_pass, memory_budget, onednn
        )
        settings = load_settings(self.ckpt_dir, check_overrides(collect_landscape))
        if not (settings.create_train or settings.create_result):
            logger.warning("create_landscape asks for neither a train nor a result landscape")
            return []
        plane = PlaneSettings(normalization, seed, settings.unit, settings.step_per_epoch)
        landscapes: list[LossLandscape] = []
        record = None
        try:
            with open_runner(
                callback_fn,
                settings.num_samples,
                options,
                plane,
                device_ids=device_ids,
                num_workers=num_workers,
                ray_address=ray_address,
                cache_root=os.path.join(self.ckpt_dir, CACHE_DIR),
                block_points=block_points,
                on_block=on_block,
                progress=progress,
            ) as runner:
                for landscape, tag in self._landscapes(runner, settings):
                    if record is None:
                        from sumlens.summary import SummaryRecord

                        record = SummaryRecord(output_dir, raise_exception=True)
                    record.add_value("landscape", tag, landscape)
                    record.record(0)
                    record.flush()
                    landscapes.append(landscape)
        finally:
            if record is not None:
                record.close()
        return landscapes

    def _landscapes(
        self, runner: LandscapeRunner, settings: LandscapeSettings
    ) -> Iterator[tuple[LossLandscape, str]]:
        """(landscape, tag) pairs, computed one at a time: train ones first, then result."""
        size = settings.landscape_size
        if settings.create_train:
            for interval in settings.intervals:
                snapshots = [self._snapshot(settings, n) for n in interval]
                landscape = runner.train_landscape(snapshots, interval, size)
                yield landscape, landscape.default_tag(interval[-1])
        if settings.create_result:
            final = settings.intervals[-1][-1]
            landscape = runner.result_landscape(self._snapshot(settings, final), final, size)
            yield landscape, landscape.default_tag(final)

    @staticmethod
    def _snapshot(settings: LandscapeSettings, number: int) -> dict[str, np.ndarray]:
        from sumlens.train.checkpoint import load_checkpoint

        return numpy_state(load_checkpoint(settings.files[number]))
