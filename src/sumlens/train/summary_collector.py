"""``SummaryCollector``: a callback that writes a run's summaries and lineage by itself.

::

    collector = SummaryCollector("./summary", collect_freq=10)
    model.train(5, loader, callbacks=[collector])

What it writes (tags as MindSpore's): ``loss/auto`` (scalar: the mean of the loss),
``learning_rate/auto`` (scalar, beyond MindSpore), ``{parameter}/auto`` (histograms of
the first five parameters or those matching ``histogram_regular``; names without DDP's
``module.`` or torch.compile's ``_orig_mod.``), ``input_data/auto`` (image: a sample of
the first input when it is NCHW with 1 or 3 channels: its first :data:`INPUT_IMAGES`
images, shrunk to at most :data:`INPUT_IMAGE_SIDE` pixels a side; MindSpore writes the whole
batch, which at real sizes costs more than the training step; dropped, and counted, while
the writer is behind or encoding them has taken more than a small share of the run's time,
:data:`INPUT_IMAGE_SHARE`), the model graph once, the dataset graph
once, train/eval lineage at the end of a run, custom lineage once and, when
``collect_landscape`` is given, the weights for loss-landscape plots in
``<summary_dir>/ckpt_dir``. Summary operators inside the network are written at the
collected steps (the collector's record is the active one during the run).

Schedule: the first step of a run is always collected, then every step that is a multiple
of ``collect_freq`` (epochs in sink mode): each collected step has the loss, the learning
rate, the weight histograms, the input images and the summary operators' values, as in
MindSpore. Only tensor data (``TensorSummary``) follows its own schedule
(:func:`sumlens.train.collector_config.tensor_range`). No step is written twice.
Nothing collected waits for the device: a loss or learning rate living on a GPU is handed
to the record as a tensor, which copies it to the host asynchronously for the writer.

``num_process`` bounds the writer's encoding threads. ``rank_zero_only=True`` makes the
collector a no-op on every rank but 0; otherwise each rank writes to ``summary_dir``
(file names carry the rank). The collector never calls a collective operation.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

import torch

from sumlens._checks import check_bool, check_int
from sumlens._landscape_settings import check_collect_landscape
from sumlens._log import logger
from sumlens.graph import from_dataloader, from_module, unwrap, watch_inputs
from sumlens.io.naming import current_rank
from sumlens.io.remote import is_url
from sumlens.io.storage import dir_mode
from sumlens.lineage import EvaluationLineage, TrainLineage
from sumlens.summary import SummaryRecord
from sumlens.summary.convert import copy_to_host_async
from sumlens.summary.export import check_export_options
from sumlens.summary.file_size import SMALLEST_STEP, check_max_file_size
from sumlens.train.callback import Callback, RunContext, RunParams
from sumlens.train.callbacks import ModelCheckpoint
from sumlens.train.checkpoint import wait_for_pending_saves
from sumlens.train.collector_config import (
    check_custom_data,
    check_summary_dir,
    env_custom_data,
    process_specified_data,
    tensor_range,
)
from sumlens.train.collector_landscape import LandscapeSaver

__all__ = ["SummaryCollector"]

HISTOGRAM_DEFAULT_COUNT = 5
LOSS_TAG = "loss/auto"
"""The scalar tag of the collected loss (as MindSpore's collector names it)."""
INPUT_IMAGES = 4
"""Images of a batch written as ``input_data/auto`` (the first ones: a sample, not all)."""
INPUT_IMAGE_SIDE = 256
"""Longest side, in pixels, of an input image as written (larger ones are shrunk)."""
INPUT_BACKLOG_BYTES = 32 * 1024 * 1024
"""A collected step's input images are dropped (counted, said once) while more than this
many bytes wait for the writer: training never waits for images to be encoded."""
INPUT_IMAGE_SHARE = 0.02
INPUT_IMAGE_FREE_SECONDS = 0.1
"""A collected step's input images are also dropped (counted, said once) while encoding
those of the run has taken the writer more than :data:`INPUT_IMAGE_FREE_SECONDS` plus
:data:`INPUT_IMAGE_SHARE` of the run's time: on a machine whose cores the training uses,
the writer's PNG work is taken from the training step. At ``collect_freq=10`` a sample
costs far less than that; at ``collect_freq=1`` on fast steps some are dropped."""
HISTOGRAM_NAMES_SHOWN = 10
"""Parameter names listed when ``histogram_regular`` matches none of them."""
_WRAPPER_PARTS = ("module", "_orig_mod")


def _only_tensors(plugin: str) -> bool:
    return plugin == "tensor"


def _no_tensors(plugin: str) -> bool:
    return plugin != "tensor"


def clean_name(name: str) -> str:
    """A parameter name without DDP (``module.``) and torch.compile (``_orig_mod.``) parts."""
    parts = name.split(".")
    kept = [p for p in parts[:-1] if p not in _WRAPPER_PARTS] + parts[-1:]
    return ".".join(kept)


def _unwrap(module: Any) -> Any:
    return unwrap(module) if isinstance(module, torch.nn.Module) else module


def _scalar(value: Any) -> float | None:
    """The mean of a number or tensor as a float (None if it is neither).

    For a device tensor this waits for the copy to the host (for lineage, once per run),
    on an event: the wait covers only the work queued before it.
    """
    value = _recordable_scalar(value)
    if isinstance(value, torch.Tensor):
        return float(copy_to_host_async(value).result())
    return value


def _recordable_scalar(value: Any) -> float | torch.Tensor | None:
    """The mean of a number or tensor, as a float or, for a CUDA tensor, a one-element
    tensor on its device: the record copies it to the host without the training thread
    waiting for the device (None if ``value`` is neither a number nor a tensor)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, torch.Tensor):
        size = value.numel()
        if size == 0 or value.is_complex():
            return None
        if value.is_cuda:
            value = value.detach()
            return value.reshape(()) if size == 1 else value.float().mean()
        if size == 1:  # the usual loss: no reduction kernel (a mean costs ~20x an item)
            return float(value.item())
        return float(value.detach().float().mean())
    if hasattr(value, "mean") and hasattr(value, "dtype"):  # numpy
        return float(value.mean())
    return None


def image_sample(images: torch.Tensor) -> torch.Tensor:
    """The first :data:`INPUT_IMAGES` images of an NCHW batch, shrunk by a whole factor
    (averaging blocks of pixels; integer images keep every k-th one) until no side
    exceeds :data:`INPUT_IMAGE_SIDE`. On the batch's device: nothing waits for it."""
    sample = images.detach()[:INPUT_IMAGES]
    factor = -(-max(sample.shape[2], sample.shape[3]) // INPUT_IMAGE_SIDE)
    if factor <= 1:
        return sample
    if sample.is_floating_point():
        return torch.nn.functional.avg_pool2d(sample, factor, ceil_mode=True)
    return sample[:, :, ::factor, ::factor]


def _dataset_path(loader: Any) -> str | None:
    dataset = getattr(loader, "dataset", loader)
    while isinstance(dataset, torch.utils.data.Subset):
        dataset = dataset.dataset
    for attr in ("root", "data_dir", "dataset_dir", "path"):
        value = getattr(dataset, attr, None)
        if isinstance(value, str | os.PathLike):
            path = os.path.realpath(os.fspath(value))
            return os.path.dirname(path) if os.path.isfile(path) else path
    files = getattr(dataset, "files", None)
    if isinstance(files, list | tuple) and files and isinstance(files[0], str | os.PathLike):
        return os.path.dirname(os.path.realpath(os.fspath(files[0])))
    return None


def _batch_size(loader: Any) -> int | None:
    size = getattr(loader, "batch_size", None)
    return size if isinstance(size, int) and not isinstance(size, bool) else None


def _sample_count(loader: Any, batch_num: Any) -> int | None:
    """Samples in a data source: ``len(loader.dataset)`` when known (exact), else MindSpore's
    approximation, steps per epoch x batch size (which counts a short last batch as full)."""
    try:
        return len(loader.dataset)
    except (AttributeError, TypeError):
        pass
    batch_size = _batch_size(loader)
    per_epoch = _steps_per_epoch(loader, batch_num)
    return None if batch_size is None or per_epoch is None else per_epoch * batch_size


def _steps_per_epoch(loader: Any, batch_num: Any) -> int | None:
    try:
        return len(loader)
    except TypeError:
        return batch_num if isinstance(batch_num, int) else None


class SummaryCollector(Callback):
    """Collect summaries and lineage of a ``Model.train``/``eval`` run (see the module doc).

    Args:
        summary_dir: directory of the event files (created with the mode the umask
            leaves, as ``os.makedirs``), or a URL of object storage (``s3://bucket/run``
            ...: see ``SummaryRecord``).
        collect_freq: collect every ``collect_freq`` steps (epochs in sink mode); the
            first one is always collected.
        num_process: writer encoding threads.
        collect_specified_data: what to collect; keys ``collect_metric``,
            ``collect_graph``, ``collect_train_lineage``, ``collect_eval_lineage``,
            ``collect_input_data``, ``collect_dataset_graph``, ``collect_learning_rate``
            (bools), ``histogram_regular`` (regex or None: the first 5 parameters) and
            ``collect_landscape`` (dict with ``intervals`` ...; None: off).
        keep_default_action: merge ``collect_specified_data`` into the defaults (True)
            or collect only what it names (False; a missing key means off).
        custom_lineage_data: ``{str: int | float | str}`` or
            ``sumlens.lineage.from_config(...)``; merged over ``$MINDINSIGHT_HYPER_CONFIG``.
        collect_tensor_freq: tensor-data frequency (None: at most 20 spread-out steps).
        max_file_size: rotate summary files before they exceed this many bytes (refused
            when a file could not hold its version record and a step with the loss).
        export_options: ``{"tensor_format": "npy"}`` also saves tensors as ``.npy``.
        rank_zero_only: do nothing on ranks other than 0.
        storage_options: fsspec's options for a ``summary_dir`` URL (``endpoint_url``,
            ``profile``, ``anon`` ...).
        owner_only: make the directories and files only their owner's, as MindSpore does
            (0700; event files 0600 while written and 0400 once closed) instead of the
            modes the umask leaves (the landscape weights are checkpoints: 0400 always).
    """

    def __init__(
        self,
        summary_dir: str | os.PathLike[str],
        collect_freq: int = 10,
        num_process: int = 32,
        collect_specified_data: dict[str, Any] | None = None,
        keep_default_action: bool = True,
        custom_lineage_data: Any = None,
        collect_tensor_freq: int | None = None,
        max_file_size: int | None = None,
        export_options: dict[str, str | None] | None = None,
        rank_zero_only: bool = False,
        *,
        storage_options: Mapping[str, Any] | None = None,
        owner_only: bool = False,
    ) -> None:
        owner = "SummaryCollector"
        self._summary_dir = check_summary_dir(summary_dir)
        self._owner_only = check_bool(owner_only, "owner_only", owner)
        self._storage_options = dict(storage_options or {})
        self._collect_freq = check_int(collect_freq, "collect_freq", owner, 1)
        self._tensor_freq = check_int(
            collect_tensor_freq, "collect_tensor_freq", owner, 1, allow_none=True
        )
        self._export_options = check_export_options(export_options)
        check_bool(keep_default_action, "keep_default_action", owner)
        self._num_process = check_int(num_process, "num_process", owner, 1)
        specified = process_specified_data(collect_specified_data, keep_default_action)
        self._landscape = check_collect_landscape(specified.get("collect_landscape"))
        if self._landscape is not None and is_url(self._summary_dir):
            raise ValueError(
                f"For '{owner}', collect_landscape needs a local summary_dir (SummaryLandscape "
                f"reads the weights back from its ckpt_dir), but got {self._summary_dir!r}"
            )
        custom = check_custom_data(custom_lineage_data)
        merged = env_custom_data()
        merged.update(custom)
        self._custom_data = merged
        self._rank_zero_only = check_bool(rank_zero_only, "rank_zero_only", owner)
        self._specified = specified
        # A file must hold a collected step's loss: refused now, not when training starts.
        step = (LOSS_TAG,) if specified.get("collect_metric", False) else SMALLEST_STEP
        self._max_file_size = check_max_file_size(max_file_size, owner, "mindspore", step)

        self._metric = specified.get("collect_metric", False)
        self._lr = specified.get("collect_learning_rate", False)
        self._graph = specified.get("collect_graph", False)
        self._train_lineage = specified.get("collect_train_lineage", False)
        self._eval_lineage = specified.get("collect_eval_lineage", False)
        self._input = specified.get("collect_input_data", False)
        self._dataset_graph = specified.get("collect_dataset_graph", False)
        self._histograms = "histogram_regular" in specified
        self._histogram_regex: str | None = specified.get("histogram_regular")

        # Kept between runs (as MindSpore does)
        self._graph_saved = False
        self._custom_saved = False
        self._optimizer: Any = None
        self._optimizer_searched = False
        self._histogram_params: list[tuple[str, torch.Tensor]] | None = None  # (tag, param)

        self._active = True
        self._landscape_saver: LandscapeSaver | None = None
        if self._landscape is not None and self._is_active_rank():
            mode = dir_mode(self._owner_only)
            os.makedirs(self._summary_dir, mode=mode, exist_ok=True)
            ckpt_dir = os.path.join(self._summary_dir, "ckpt_dir")
            os.makedirs(ckpt_dir, mode=mode, exist_ok=True)
            self._landscape_saver = LandscapeSaver(ckpt_dir, self._landscape, self._owner_only)
            logger.info("SummaryCollector saves landscape weights to %s", ckpt_dir)

        self._record: SummaryRecord | None = None
        self._record_stack: contextlib.ExitStack | None = None
        self._owns_run_record = False
        self._reset_run()

    # ---- properties ----------------------------------------------------------------------

    @property
    def summary_dir(self) -> str:
        return self._summary_dir

    @property
    def collect_specified_data(self) -> dict[str, Any]:
        """The processed ``collect_specified_data`` (absent key = not collected)."""
        return dict(self._specified)

    @property
    def custom_lineage_data(self) -> dict[str, Any]:
        """Custom lineage data: ``$MINDINSIGHT_HYPER_CONFIG``'s, overridden by the argument's."""
        return dict(self._custom_data)

    # ---- run state -----------------------------------------------------------------------

    def _is_active_rank(self) -> bool:
        return not self._rank_zero_only or current_rank() == 0

    def _reset_run(self) -> None:
        self._first_collection = True
        self._sink = True
        self._mode = "train"
        self._tensor_range: range = range(0)
        self._last_collected: int | None = None
        self._graph_watch: Any = None
        self._logged_plan = False
        self._images_dropped = 0
        self._image_clock = (time.perf_counter(), 0.0)
        """When the run began and the record's image seconds then (the images' budget)."""

    def _open_record(self) -> None:
        """Open the run's record and enter it, so that it is the active record of the
        summary operators until :meth:`_close_record` (the stack spans the hooks)."""
        record = SummaryRecord(
            self._summary_dir,
            num_process=self._num_process,
            max_file_size=self._max_file_size,
            raise_exception=False,
            export_options=self._export_options or None,
            storage_options=self._storage_options or None,
            owner_only=self._owner_only,
        )
        record.stop_keeping_calls()  # the graph is captured here, from watch_inputs
        stack = contextlib.ExitStack()
        self._record = stack.enter_context(record)
        self._record_stack = stack

    @property
    def _run_record(self) -> SummaryRecord:
        """The record of the run being collected (steps are collected only while it is open)."""
        assert self._record is not None
        return self._record

    def _close_record(self) -> None:
        stack, self._record_stack = self._record_stack, None
        self._record = None
        if self._graph_watch is not None:
            self._graph_watch.remove()
            self._graph_watch = None
        if stack is not None:
            stack.close()

    def flush(self) -> None:
        """Return once everything collected so far is readable on disk (no-op when idle)."""
        if self._record is not None:
            self._record.flush()

    def __enter__(self) -> SummaryCollector:
        self._active = self._is_active_rank()
        self._reset_run()
        if self._active and self._record is None:
            self._open_record()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._owns_run_record = False
        self._close_record()

    # ---- hooks -----------------------------------------------------------------------------

    runs_in_fit_eval = False

    def on_train_begin(self, run_context: RunContext) -> None:
        self._begin(run_context.original_args(), "train")

    def on_eval_begin(self, run_context: RunContext) -> None:
        self._begin(run_context.original_args(), "eval")

    def on_train_step_end(self, run_context: RunContext) -> None:
        if not self._active or self._record is None:
            return
        cb = run_context.original_args()
        step = cb.cur_step_num
        first_values = False
        if not self._graph_saved:
            self._graph_saved = True
            first_values = True
            if self._graph:
                self._add_graph(cb)
            if self._dataset_graph:
                self._add_dataset_graph(cb)
        if self._custom_data and not self._custom_saved:
            self._custom_saved = True
            first_values = True
            self._record.add_value("custom_lineage_data", "custom_lineage_data", self._custom_data)
        if self._sink:
            if first_values:
                self._record.record(step)
        elif not self._collect(cb, step):
            # drop this step's summary-operator values: only collected steps are written
            self._record.discard_pending()
        saver = self._landscape_saver
        if saver is not None and saver.unit == "step" and saver.wanted(step):
            saver.save(_unwrap(cb.network), step)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        if not self._active or self._record is None:
            return
        cb = run_context.original_args()
        epoch = cb.cur_epoch_num
        if self._sink and not self._collect(cb, epoch):
            self._record.discard_pending()
        # non-sink: on_train_step_end already decided about this step (none written twice)
        saver = self._landscape_saver
        if saver is not None and saver.unit == "epoch" and saver.wanted(epoch):
            saver.save(_unwrap(cb.network), epoch)
        self._record.flush()

    def on_eval_epoch_end(self, run_context: RunContext) -> None:
        if self._active and self._record is not None:
            self._record.flush()

    def on_train_end(self, run_context: RunContext) -> None:
        self._end(run_context.original_args(), "train")

    def on_eval_end(self, run_context: RunContext) -> None:
        self._end(run_context.original_args(), "eval")

    def _begin(self, cb: RunParams, mode: str) -> None:
        if not self._active:
            return
        others = [c for c in cb.get("list_callback", None) or [] if isinstance(c, SummaryCollector)]
        if len(others) > 1:
            raise ValueError(
                "There are more than one SummaryCollector instance in the callback list; "
                "use only one per run"
            )
        if self._record is None:  # hooks driven without entering the callback
            self._reset_run()
            self._open_record()
            self._owns_run_record = True
        record = self._record
        assert record is not None
        self._mode = mode
        record.set_mode(mode)
        self._sink = bool(cb.get("dataset_sink_mode", False))
        self._first_collection = True
        self._last_collected = None
        self._start_step = int(cb.get("initial_step", 0) or 0)
        self._start_epoch = int(cb.get("cur_epoch_num", 0) or 0)
        if mode == "train":
            self._image_clock = (time.perf_counter(), record.image_seconds)
            self._log_plan()
            if self._graph and not self._graph_saved:
                network = _unwrap(cb.get("network", None))
                if isinstance(network, torch.nn.Module):
                    self._graph_watch = watch_inputs(network)

    def _end(self, cb: RunParams, mode: str) -> None:
        record = self._record
        if not self._active or record is None:
            return
        lineage: Any = None
        try:
            if mode == "train" and self._train_lineage:
                lineage = self._train_lineage_of(cb)
            elif mode == "eval" and self._eval_lineage:
                lineage = self._eval_lineage_of(cb)
        except Exception as err:  # lineage must never break training
            logger.warning("SummaryCollector could not collect %s lineage: %r", mode, err)
        if lineage is not None:
            record.add_value(lineage.plugin, lineage.plugin, lineage)
        if self._images_dropped:
            logger.warning(
                "SummaryCollector: the input images of %d collected steps were dropped "
                "because the summary writer was behind (or over the images' share of time)",
                self._images_dropped,
            )
            self._images_dropped = 0
        record.set_mode("eval")  # pending summary-operator values are not written
        record.record(0)
        if self._graph_watch is not None:
            self._graph_watch.remove()
            self._graph_watch = None
        if mode == "train" and self._landscape_saver is not None:
            steps = cb.get("batch_num", 0)
            if cb.get("dataset_sink_mode", False) and cb.get("sink_size", None):
                steps = _steps_per_epoch(cb.get("train_dataset", None), steps) or steps
            self._landscape_saver.write_metadata(int(steps))
        record.flush()
        if self._owns_run_record:
            self._owns_run_record = False
            self._close_record()

    # ---- collection ----------------------------------------------------------------------

    def _log_plan(self) -> None:
        if self._logged_plan:
            return
        self._logged_plan = True
        histograms = self._histogram_regex or "first 5 parameters"
        plan = (
            (self._metric, "loss"),
            (self._lr, "learning rate"),
            (self._histograms, f"weight histograms ({histograms})"),
            (self._input, "input images"),
            (self._graph, "model graph"),
            (self._dataset_graph, "dataset graph"),
            (self._train_lineage, "train lineage"),
            (self._eval_lineage, "eval lineage"),
            (self._custom_data, f"custom lineage ({len(self._custom_data)} keys)"),
        )
        parts = [what for wanted, what in plan if wanted]
        if self._landscape_saver is not None:
            parts.append(f"landscape weights ({self._landscape_saver.ckpt_dir})")
        tensors = f"every {self._tensor_freq}" if self._tensor_freq else "at most 20 spread-out"
        logger.info(
            "SummaryCollector writes to %s every %d %s (the first always; tensors %s): %s",
            self._summary_dir,
            self._collect_freq,
            "epochs" if self._sink else "steps",
            tensors,
            ", ".join(parts) or "summary operators only",
        )

    def _collect(self, cb: Any, current: int) -> bool:
        """Collect this step (``current``: the step, or the epoch in sink mode) if it is
        due: the first of the run always, then every ``collect_freq``-th, with the input
        images, the loss, the learning rate, the weight histograms and the summary
        operators' values; tensor data (``TensorSummary``) alone follows its own schedule
        (``tensor_range``), so a step due only for it writes nothing else, as in
        MindSpore's ``_collect_tensor_data``. True if the step was written."""
        record = self._run_record
        step = current if not self._sink else cb.cur_step_num
        if self._mode != "train" or step == self._last_collected:
            return False
        plugin_filter: Callable[[str], bool] | None
        if self._first_collection:
            self._first_collection = False
            total = int(cb.get("epoch_num", 1))
            start = self._start_epoch
            if not self._sink:
                total *= int(cb.get("batch_num", 1))
                start = self._start_step
            self._tensor_range = tensor_range(total, self._collect_freq, self._tensor_freq, start)
            plugin_filter = None
        else:
            hit_freq = current % self._collect_freq == 0
            hit_tensor = current in self._tensor_range
            if hit_freq and hit_tensor:
                plugin_filter = None
            elif hit_tensor:
                plugin_filter = _only_tensors
            elif hit_freq:
                plugin_filter = _no_tensors
            else:
                return False
        if plugin_filter is not _only_tensors:  # a tensor-only step would drop them all
            self._collect_input(cb)
            self._collect_loss(cb)
            self._collect_lr(cb)
            self._collect_histograms(cb)
        record.record(step, plugin_filter=plugin_filter)
        self._last_collected = step
        return True

    def _collect_input(self, cb: Any) -> None:
        if not self._input:
            return
        data = cb.get("train_dataset_element", None)
        if isinstance(data, list | tuple):
            data = data[0] if data else None
        if not isinstance(data, torch.Tensor):
            logger.warning(
                "SummaryCollector: the input data is not a tensor or a non-empty list/tuple "
                "of tensors; input data will not be collected"
            )
            self._input = False
            return
        if data.dim() != 4 or data.shape[1] not in (1, 3):
            logger.warning(
                "SummaryCollector: the input data of the network are not images (NCHW with 1 "
                "or 3 channels, got shape %s); input data will not be collected",
                tuple(data.shape),
            )
            self._input = False
            return
        if self._run_record.pending_bytes > INPUT_BACKLOG_BYTES or self._images_over_budget():
            self._images_dropped += 1
            if self._images_dropped == 1:
                logger.warning(
                    "SummaryCollector: the summary writer is behind (or encoding input images "
                    "would take more than %d%% of the run's time); input images of steps "
                    "collected meanwhile are dropped rather than slowing training (the count "
                    "is logged at the end of the run)",
                    round(INPUT_IMAGE_SHARE * 100),
                )
            return
        self._run_record.add_value("image", "input_data/auto", image_sample(data))

    def _images_over_budget(self) -> bool:
        """Whether encoding this run's input images has taken more than its share so far
        (see :data:`INPUT_IMAGE_SHARE`)."""
        started, seconds_before = self._image_clock
        spent = self._run_record.image_seconds - seconds_before
        allowed = INPUT_IMAGE_FREE_SECONDS + INPUT_IMAGE_SHARE * (time.perf_counter() - started)
        return spent > allowed

    def _net_output(self, cb: Any) -> Any:
        """The network's output (its first one when there are several), or None."""
        outputs = cb.get("net_outputs", None)
        if isinstance(outputs, list | tuple):
            outputs = outputs[0] if outputs else None
        return outputs

    def _loss_of(self, cb: Any) -> float | None:
        return _scalar(self._net_output(cb))

    def _collect_loss(self, cb: Any) -> None:
        if not self._metric:
            return
        loss = _recordable_scalar(self._net_output(cb))
        if loss is None:
            logger.warning(
                "SummaryCollector: can not find any output of the network that is a loss "
                "(net_outputs=%r); the loss will not be collected",
                type(cb.get("net_outputs", None)).__name__,
            )
            self._metric = False
            return
        # A float takes the record's plain-scalar path; a one-element CUDA tensor is copied
        # to the host without waiting for the device.
        self._run_record.add_value("scalar", LOSS_TAG, loss)

    def _find_optimizer(self, cb: Any) -> Any:
        if self._optimizer_searched:
            return self._optimizer
        self._optimizer_searched = True
        optimizer = cb.get("optimizer", None)
        if optimizer is None:
            network = cb.get("train_network", None) or cb.get("eval_network", None)
            if isinstance(network, torch.nn.Module):
                for module in network.modules():
                    candidate = getattr(module, "optimizer", None)
                    if isinstance(candidate, torch.optim.Optimizer):
                        optimizer = candidate
                        break
        if not isinstance(optimizer, torch.optim.Optimizer):
            logger.warning(
                "SummaryCollector: no torch.optim.Optimizer found; weight histograms and the "
                "learning rate will not be collected"
            )
            optimizer = None
        self._optimizer = optimizer
        return optimizer

    def _collect_lr(self, cb: Any) -> None:
        if not self._lr:
            return
        optimizer = self._find_optimizer(cb)
        lr = None if optimizer is None else _recordable_scalar(optimizer.param_groups[0].get("lr"))
        if lr is None:
            self._lr = False
            return
        self._run_record.add_value("scalar", "learning_rate/auto", lr)

    def _collect_histograms(self, cb: Any) -> None:
        if not self._histograms:
            return
        if self._histogram_params is None:
            optimizer = self._find_optimizer(cb)
            if optimizer is None:
                self._histograms = False
                return
            names: dict[int, str] = {}
            network = cb.get("network", None)
            if isinstance(network, torch.nn.Module):
                names = {id(p): clean_name(n) for n, p in network.named_parameters()}
            params = []
            for g, group in enumerate(optimizer.param_groups):
                for i, param in enumerate(group["params"]):
                    params.append((names.get(id(param), f"param_group{g}.{i}"), param))
            if self._histogram_regex is None:
                params = params[:HISTOGRAM_DEFAULT_COUNT]
            else:
                pattern = re.compile(self._histogram_regex)
                matched = [(n, p) for n, p in params if pattern.match(n)]
                if params and not matched:
                    names_shown = [n for n, _ in params[:HISTOGRAM_NAMES_SHOWN]]
                    logger.warning(
                        "SummaryCollector: histogram_regular %r matches none of the %d "
                        "parameter names (re.match, from the start of the name; names: %s%s); "
                        "weight histograms will not be collected",
                        self._histogram_regex,
                        len(params),
                        ", ".join(names_shown),
                        ", ..." if len(params) > len(names_shown) else "",
                    )
                params = matched
            self._histogram_params = [(f"{name}/auto", param) for name, param in params]
        add_value = self._run_record.add_value
        for tag, param in self._histogram_params:  # binned now, from the live memory
            add_value("histogram", tag, param)

    def _add_graph(self, cb: Any) -> None:
        watch, self._graph_watch = self._graph_watch, None
        network = _unwrap(cb.get("network", None))
        if watch is None or not watch.fired or not isinstance(network, torch.nn.Module):
            logger.warning(
                "SummaryCollector: can not get the graph of the network; "
                "the graph will not be collected"
            )
            if watch is not None:
                watch.remove()
            return
        try:
            graph = from_module(network, watch.args, example_kwargs=watch.kwargs)
        except Exception as err:
            logger.warning("SummaryCollector: could not capture the graph: %r", err)
            return
        finally:
            watch.remove()
            watch.clear()
        self._run_record.add_value("graph", "train_network/auto", graph)

    def _add_dataset_graph(self, cb: Any) -> None:
        loader = cb.get("train_dataset", None)
        if not isinstance(loader, torch.utils.data.DataLoader):
            logger.warning(
                "SummaryCollector: the train dataset is not a torch DataLoader; "
                "the dataset graph will not be collected"
            )
            return
        try:
            graph = from_dataloader(loader)
        except Exception as err:
            logger.warning("SummaryCollector: could not describe the dataset: %r", err)
            return
        self._run_record.add_value("dataset_graph", "train_dataset", graph)

    # ---- lineage ---------------------------------------------------------------------------

    def _train_lineage_of(self, cb: Any) -> Any:
        optimizer = self._find_optimizer(cb)
        lr = None
        if optimizer is not None:
            lr = _scalar(optimizer.param_groups[0].get("lr"))
        loss_fn = cb.get("loss_fn", None)
        loss_name = None if loss_fn is None else type(loss_fn).__name__
        if loss_name is None:
            train_network = cb.get("train_network", None)
            if isinstance(train_network, torch.nn.Module):
                for module in train_network.modules():
                    if isinstance(module, torch.nn.modules.loss._Loss):
                        loss_name = type(module).__name__
                        break
        loader = cb.get("train_dataset", None)
        batch_size = _batch_size(loader)
        dataset_size = _sample_count(loader, cb.get("batch_num", None))
        model_path, model_size = self._model_file(cb)
        network = _unwrap(cb.get("network", None))
        epoch = cb.get("epoch_num", None)
        device_num = cb.get("device_number", None)
        return TrainLineage(
            optimizer=None if optimizer is None else type(optimizer).__name__,
            learning_rate=lr,
            loss_function=loss_name,
            epoch=epoch if isinstance(epoch, int) else None,
            parallel_mode=cb.get("parallel_mode", None),
            device_num=device_num if isinstance(device_num, int) else None,
            batch_size=batch_size,
            train_dataset_path=_dataset_path(loader) if loader is not None else None,
            train_dataset_size=dataset_size,
            network=None if network is None else type(network).__name__,
            loss=self._loss_of(cb),
            model_path=model_path,
            model_size=model_size,
        )

    def _model_file(self, cb: Any) -> tuple[str | None, int]:
        latest = ""
        for callback in cb.get("list_callback", None) or []:
            if isinstance(callback, ModelCheckpoint):
                latest = callback.latest_ckpt_file_name
        if not latest:
            return None, 0
        path = os.path.realpath(latest)
        try:
            return path, os.path.getsize(path)
        except OSError:
            wait_for_pending_saves(60.0)
            try:
                return path, os.path.getsize(path)
            except OSError:
                return path, 0

    def _eval_lineage_of(self, cb: Any) -> Any:
        metrics = cb.get("metrics", None)
        if metrics is not None:
            try:
                json.dumps({str(k): _json_number(v) for k, v in metrics.items()})
                metrics = {str(k): _json_number(v) for k, v in metrics.items()}
            except (TypeError, ValueError, AttributeError) as err:
                logger.warning("SummaryCollector: metrics are not JSON-able (%s); omitted", err)
                metrics = None
        loader = cb.get("valid_dataset", None)
        size = _sample_count(loader, cb.get("batch_num", None))
        return EvaluationLineage(
            metrics=metrics,
            valid_dataset_path=_dataset_path(loader) if loader is not None else None,
            valid_dataset_size=size,
        )


def _json_number(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if hasattr(value, "tolist"):
        return value.tolist()
    return value
