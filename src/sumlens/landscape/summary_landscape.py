"""``SummaryLandscape``: loss landscapes from the weights a SummaryCollector saved.

MindSpore's API, with what made it hard to use taken out: one worker runs in the calling
process (``device_ids=None``, on which MindSpore's crashes) with no ``__main__`` guard and
no Linux-only rule; the record is opened only after the arguments are checked;
``train_metadata.json`` is never rewritten (overrides apply in memory, to one call);
random directions and randomized PCA are seeded, so a landscape is reproducible; results
are cached per block under ``ckpt_dir``, so a rerun after an interruption resumes; and
every landscape is also returned as a
:class:`~sumlens.landscape.LossLandscape`. Landscapes are written in MindSpore's order:
every train (PCA) landscape in interval order, then the result (random) one, each at
step 0 and flushed at once.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from sumlens._checks import check_bool, check_directory
from sumlens._landscape_settings import LandscapeSettings, check_overrides, load_settings
from sumlens._log import logger
from sumlens.io.storage import dir_mode
from sumlens.landscape.builder import LossLandscape
from sumlens.landscape.compute import LandscapeRunner, RunOptions, numpy_state, open_runner
from sumlens.summary import SummaryRecord
from sumlens.train.checkpoint import load_checkpoint

MAX_DIR_LENGTH = 1024
CACHE_DIR = "landscape_cache"
OWNER = "SummaryLandscape.gen_landscapes_with_multi_process"


class SummaryLandscape:
    """Loss landscapes of a run recorded with ``SummaryCollector(collect_landscape=...)``.

    ``summary_dir`` is the collector's directory; the weights and ``train_metadata.json``
    are in its ``ckpt_dir`` (created if missing). The landscapes' summary file and the
    directories made get the modes the umask leaves, as the collector's; ``owner_only=True``
    makes them only their owner's (0700; the file 0600 while written, 0400 once closed).
    """

    def __init__(self, summary_dir: str | os.PathLike[str], *, owner_only: bool = False) -> None:
        self.summary_dir = check_directory(
            summary_dir, "summary_dir", "SummaryLandscape", MAX_DIR_LENGTH
        )
        self.owner_only = check_bool(owner_only, "owner_only", "SummaryLandscape")
        self.ckpt_dir = os.path.join(self.summary_dir, "ckpt_dir")
        os.makedirs(self.ckpt_dir, mode=dir_mode(self.owner_only), exist_ok=True)

    def clean_ckpt(self) -> None:
        """Delete ``ckpt_dir`` (weights, metadata and cached blocks), ignoring errors."""
        shutil.rmtree(self.ckpt_dir, ignore_errors=True)

    def gen_landscapes_with_multi_process(
        self,
        callback_fn: Callable[[], Sequence[Any]],
        collect_landscape: dict[str, Any] | None = None,
        device_ids: list[int] | None = None,
        output: str | os.PathLike[str] | None = None,
        **options: Any,
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

        Keyword options: those of :func:`sumlens.landscape.compute_landscape`
        (:class:`~sumlens.landscape.compute.RunOptions`), among them ``num_workers``
        (worker processes on CPU instead of ``device_ids``, or Ray actors with
        ``ray_address``), ``ray_address`` (run the blocks as Ray tasks: ``"auto"``,
        ``"ray://..."``; an already initialised Ray is used as it is),
        ``normalization``, ``seed`` and ``train_mode`` (score in train mode, MindSpore's
        choice; default eval mode).

        Returns:
            The landscapes in the order written: every train (PCA) landscape in
            interval order, then the result (random) one.
        """
        if not callable(callback_fn):
            raise TypeError(f"callback_fn must be a function, got {type(callback_fn).__name__}")
        output_dir = self.summary_dir
        if output is not None:
            output_dir = check_directory(output, "output", OWNER, MAX_DIR_LENGTH)
        run = RunOptions.from_keywords("gen_landscapes_with_multi_process", options)
        settings = load_settings(self.ckpt_dir, check_overrides(collect_landscape))
        if not (settings.create_train or settings.create_result):
            logger.warning("create_landscape asks for neither a train nor a result landscape")
            return []
        landscapes: list[LossLandscape] = []
        record = None
        try:
            with open_runner(
                callback_fn,
                settings.num_samples,
                run,
                unit=settings.unit,
                step_per_epoch=settings.step_per_epoch,
                device_ids=device_ids,
                cache_root=os.path.join(self.ckpt_dir, CACHE_DIR),
            ) as runner:
                for landscape, tag in self._landscapes(runner, settings):
                    if record is None:
                        record = SummaryRecord(
                            output_dir, raise_exception=True, owner_only=self.owner_only
                        )
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
        return numpy_state(load_checkpoint(settings.files[number]))
