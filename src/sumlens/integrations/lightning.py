"""PyTorch Lightning: a logger that writes a sumlens run, and a callback that adds what
:class:`sumlens.SummaryCollector` collects.

::

    from sumlens.integrations.lightning import SumlensCallback, SumlensLogger

    trainer = lightning.Trainer(
        logger=SumlensLogger("logs"), callbacks=[SumlensCallback(collect_freq=10)]
    )

:class:`SumlensLogger` lays its run out as Lightning's ``TensorBoardLogger`` does
(``<save_dir>/<name>/version_<n>``, checkpoints and ``hparams.yaml`` beside the event files)
and writes it with :class:`sumlens.SummaryWriter`, in TensorBoard's format by default or
MindSpore's (``file_format="mindspore"``). Only global rank zero creates files or
directories. :class:`SumlensCallback` writes into that logger's run; it never calls a
collective operation nor waits for a device.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from argparse import Namespace
from collections.abc import Mapping
from typing import Any

import torch
from lightning.fabric.utilities import move_data_to_device
from lightning.pytorch import Callback, LightningModule, Trainer
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.core.saving import save_hparams_to_yaml
from lightning.pytorch.loggers.logger import Logger, rank_zero_experiment
from lightning.pytorch.utilities import rank_zero_only

from sumlens._checks import check_bool, check_choice, check_instance, check_int
from sumlens._landscape_settings import check_collect_landscape
from sumlens._log import logger, warn_once
from sumlens.integrations.lineage import record_lineage
from sumlens.io.remote import FsspecStorage, is_url, open_storage
from sumlens.lineage import EvaluationLineage, UserDefinedInfo
from sumlens.train.collector_landscape import LandscapeSaver
from sumlens.train.summary_collector import (
    HISTOGRAM_DEFAULT_COUNT,
    INPUT_BACKLOG_BYTES,
    clean_name,
    image_sample,
)
from sumlens.writer import SummaryWriter
from sumlens.writer.summary_writer import FILE_FORMATS, check_writer_options

__all__ = ["SumlensCallback", "SumlensLogger"]

HPARAMS_FILE = "hparams.yaml"
"""Written into the run directory as ``TensorBoardLogger`` writes it (Lightning reads it back
with ``load_from_checkpoint(hparams_file=...)``)."""
PARAM_SEPARATOR = "/"
"""Nested hyper-parameters are joined as Lightning's loggers join them (``optim/lr``)."""


class SumlensLogger(Logger):
    """A Lightning logger writing ``<save_dir>/<name>/version_<n>`` with a sumlens writer.

    Args:
        save_dir: the directory holding the experiments (``TensorBoardLogger``'s ``save_dir``).
        name: the experiment's directory under ``save_dir`` (None or "": none).
        version: an int (``version_<int>``), a str (the directory's own name) or None: the
            next free ``version_<n>`` under ``<save_dir>/<name>``.
        file_format: ``"tensorboard"`` or ``"mindspore"``, as :class:`sumlens.SummaryWriter`.
        default_hp_metric: log ``hp_metric = -1`` with hyper-parameters logged without
            metrics, as ``TensorBoardLogger`` does (TensorBoard's hparams view needs a metric).
        log_graph: write the model's graph when Lightning asks (at the start of ``fit``),
            from ``example_input_array``.
        **writer_kwargs: passed on to :class:`sumlens.SummaryWriter` (``flush_secs``,
            ``filename_suffix``, ``storage_options``, ``spool_dir`` ...:
            ``ADAPTER_WRITER_OPTIONS``).

    ``save_dir`` may be a URL (``s3://bucket/experiments``), as ``TensorBoardLogger``'s:
    the versions are listed there (with ``storage_options``), the run is written through
    the writer's spool, and ``hparams.yaml`` is put beside it.

    The writer is created on first use, on global rank zero only; other ranks write nothing.
    """

    def __init__(
        self,
        save_dir: str | os.PathLike[str],
        name: str | None = "lightning_logs",
        version: int | str | None = None,
        *,
        file_format: str = "tensorboard",
        default_hp_metric: bool = True,
        log_graph: bool = True,
        **writer_kwargs: Any,
    ) -> None:
        super().__init__()
        owner = "SumlensLogger"
        check_instance(save_dir, "save_dir", owner, (str, os.PathLike), "a str or os.PathLike")
        check_instance(name, "name", owner, str, "a str", allow_none=True)
        check_instance(version, "version", owner, (int, str), "an int or a str", allow_none=True)
        self._save_dir = os.fspath(save_dir)
        self._name = name or ""
        self._version = version
        self._file_format = check_choice(file_format, "file_format", owner, FILE_FORMATS)
        self._default_hp_metric = check_bool(default_hp_metric, "default_hp_metric", owner)
        self._log_graph = check_bool(log_graph, "log_graph", owner)
        self._writer_kwargs = check_writer_options(writer_kwargs, owner)
        self._experiment: SummaryWriter | None = None
        self._step = 0
        self.hparams: dict[str, Any] = {}

    # ---- layout (as TensorBoardLogger's) -----------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def version(self) -> int | str:
        """The version given, else the next free ``version_<n>`` number (found once)."""
        if self._version is None:
            self._version = self._next_version()
        return self._version

    @property
    def save_dir(self) -> str:
        return self._save_dir

    @property
    def root_dir(self) -> str:
        """``<save_dir>/<name>``: the directory of the experiment's versions."""
        return os.path.join(self._save_dir, self._name)

    @property
    def log_dir(self) -> str:
        """``<save_dir>/<name>/version_<n>`` (or the str version itself): this run's directory."""
        version = self.version
        leaf = version if isinstance(version, str) else f"version_{version}"
        return os.path.expanduser(os.path.expandvars(os.path.join(self.root_dir, leaf)))

    def _next_version(self) -> int:
        storage, root = open_storage(self.root_dir, self._writer_kwargs.get("storage_options"))
        try:
            entries = storage.list_dir(root, keep=lambda _: False)  # directories only
        except OSError:
            return 0
        prefix = "version_"
        taken = [
            int(entry.name[len(prefix) :])
            for entry in entries
            if entry.is_dir
            and entry.name.startswith(prefix)
            and entry.name[len(prefix) :].isdigit()
        ]
        return max(taken, default=-1) + 1

    @property
    @rank_zero_experiment
    def experiment(self) -> SummaryWriter:
        """The run's :class:`sumlens.SummaryWriter` (created on first use, on rank zero)."""
        if self._experiment is None:
            self._experiment = SummaryWriter(
                log_dir=self.log_dir, file_format=self._file_format, **self._writer_kwargs
            )
        return self._experiment

    # ---- logging -----------------------------------------------------------------------------

    @rank_zero_only
    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """Each metric as a scalar at ``step`` (a dict value as ``add_scalars``); tensors
        are handed to the writer as they are, which copies them without a device sync."""
        if step is not None:
            self._step = step
        writer = self.experiment
        for tag, value in metrics.items():
            if isinstance(value, Mapping):
                writer.add_scalars(tag, dict(value), step)
            else:
                writer.add_scalar(tag, value, step)

    @rank_zero_only
    def log_hyperparams(
        self,
        params: Mapping[str, Any] | Namespace,
        metrics: Mapping[str, Any] | float | None = None,
        step: int | None = None,
    ) -> None:
        """The hyper-parameters into this run (TensorBoard's hparams records and custom
        lineage), nested keys joined with ``/``; ``metrics`` (also written as scalars)
        default to ``hp_metric = -1`` with ``default_hp_metric``, as ``TensorBoardLogger``'s."""
        given = vars(params) if isinstance(params, Namespace) else dict(params)
        self.hparams.update(given)
        flat = _flat_params(given)
        if metrics is None:
            metrics = {"hp_metric": -1} if self._default_hp_metric else {}
        elif not isinstance(metrics, Mapping):
            metrics = {"hp_metric": metrics}
        self.experiment.add_hparams(flat, dict(metrics), global_step=step)

    @rank_zero_only
    def log_graph(self, model: torch.nn.Module, input_array: Any = None) -> None:
        """The model's graph, traced with ``input_array`` (default: the module's
        ``example_input_array``); without either it says so once and writes none."""
        if not self._log_graph:
            return
        if input_array is None:
            input_array = getattr(model, "example_input_array", None)
        if input_array is None:
            warn_once(
                "lightning-no-graph-input",
                "SumlensLogger: no graph written: %s has no example_input_array and "
                "log_graph() got no input_array",
                type(model).__name__,
            )
            return
        if not isinstance(input_array, torch.Tensor | tuple):
            warn_once(
                "lightning-graph-input-type",
                "SumlensLogger: no graph written: the example input is a %s; it must be a "
                "tensor or a tuple of forward()'s positional arguments",
                type(input_array).__name__,
            )
            return
        device = getattr(model, "device", None)
        if device is not None:
            input_array = move_data_to_device(input_array, device)
        self.experiment.add_graph(model, input_array)

    @rank_zero_only
    def after_save_checkpoint(self, checkpoint_callback: ModelCheckpoint) -> None:
        """The best and last checkpoint paths (and the best score) as custom lineage."""
        data: dict[str, Any] = {}
        for key in ("best_model_path", "last_model_path"):
            path = getattr(checkpoint_callback, key, "")
            if path:
                data[f"checkpoint.{key}"] = path if is_url(path) else os.path.realpath(path)
        score = getattr(checkpoint_callback, "best_model_score", None)
        if isinstance(score, torch.Tensor) and score.numel() == 1:
            data["checkpoint.best_model_score"] = float(score)  # once per checkpoint
        if data:
            record_lineage(self.experiment, self._step, UserDefinedInfo(data))

    @rank_zero_only
    def save(self) -> None:
        """Everything logged so far readable where it is written; ``hparams.yaml`` once, as
        ``TensorBoardLogger`` writes it (on object storage, put beside the run)."""
        self.experiment.flush()
        path = os.path.join(self.log_dir, HPARAMS_FILE)
        if not is_url(self.log_dir):
            if os.path.isdir(self.log_dir) and not os.path.isfile(path):
                save_hparams_to_yaml(path, self.hparams)
            return
        storage, remote_path = open_storage(path, self._writer_kwargs.get("storage_options"))
        assert isinstance(storage, FsspecStorage)  # a URL's storage
        try:
            storage.stat(remote_path)
        except FileNotFoundError:
            with tempfile.TemporaryDirectory(prefix="sumlens-hparams-") as local:
                written = os.path.join(local, HPARAMS_FILE)
                save_hparams_to_yaml(written, self.hparams)
                with open(written, "rb") as file:
                    storage.put(remote_path, file.read())

    @rank_zero_only
    def finalize(self, status: str) -> None:
        """Close the writer (``hparams.yaml`` written first after a success). Lightning may
        call it twice, and log again after it (a ``test`` after ``fit``): a later call
        makes a new writer in the same run directory."""
        if self._experiment is None:
            return
        if status == "success":
            self.save()
        experiment, self._experiment = self._experiment, None
        experiment.close()

    def __getstate__(self) -> dict[str, Any]:
        """Picklable for spawned processes: without the writer (each rank makes its own)."""
        state = self.__dict__.copy()
        state["_experiment"] = None
        return state


def _flat_params(params: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Hyper-parameters as the writer takes them: nested mappings and Namespaces joined
    with ``/``; numbers, strs and bools kept, one-element tensors/arrays as numbers,
    anything else as its text."""
    flat: dict[str, Any] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, Namespace):
            value = vars(value)
        if isinstance(value, Mapping):
            flat.update(_flat_params(value, name + PARAM_SEPARATOR))
        elif isinstance(value, bool | int | float | str):
            flat[name] = value
        elif _one_number(value):
            flat[name] = value.item()
        else:
            flat[name] = str(value)
    return flat


def _one_number(value: Any) -> bool:
    """A torch tensor or numpy array (or numpy scalar) holding one element."""
    if isinstance(value, torch.Tensor):
        return value.numel() == 1
    return hasattr(value, "item") and getattr(value, "size", None) == 1


class SumlensCallback(Callback):
    """What :class:`sumlens.SummaryCollector` collects, for a Lightning ``Trainer`` whose
    logger is a :class:`SumlensLogger` (written into its run).

    At the first optimizer step of ``fit`` and every ``collect_freq``-th after it
    (``trainer.global_step``): the learning rate of every parameter group of every optimizer
    (``learning_rate/auto`` for the first, ``learning_rate/<optimizer>.<group>/auto`` for
    the others), histograms of the parameters whose names ``histogram_regular`` matches
    (``re.match``; None: the first five) as ``<name>/auto``, and a sample of the batch's
    input images (the first tensor of the batch when it is NCHW with 1 or 3 channels: its
    first four images, shrunk to at most 256 pixels a side) as ``input_data/auto``. At the
    end of each validation (not the sanity check): eval lineage with the trainer's
    ``callback_metrics`` and the validation set's size. ``collect_landscape`` (the
    collector's settings) saves the module's weights for loss landscapes into
    ``<log_dir>/ckpt_dir``. Global rank zero only; nothing waits for a device.
    """

    def __init__(
        self,
        collect_freq: int = 10,
        *,
        histogram_regular: str | None = None,
        collect_histograms: bool = True,
        collect_learning_rate: bool = True,
        collect_input_data: bool = True,
        collect_eval_lineage: bool = True,
        collect_landscape: dict[str, Any] | None = None,
    ) -> None:
        owner = "SumlensCallback"
        self._freq = check_int(collect_freq, "collect_freq", owner, 1)
        check_instance(histogram_regular, "histogram_regular", owner, str, "a str", allow_none=True)
        try:
            self._pattern = None if histogram_regular is None else re.compile(histogram_regular)
        except re.error as err:
            raise ValueError(
                f"For '{owner}', the argument 'histogram_regular' must be a regular expression, "
                f"but {histogram_regular!r} does not compile: {err}"
            ) from err
        self._histograms = check_bool(collect_histograms, "collect_histograms", owner)
        self._lr = check_bool(collect_learning_rate, "collect_learning_rate", owner)
        self._images = check_bool(collect_input_data, "collect_input_data", owner)
        self._eval = check_bool(collect_eval_lineage, "collect_eval_lineage", owner)
        self._landscape = check_collect_landscape(collect_landscape)
        self._saver: LandscapeSaver | None = None
        self._logger: SumlensLogger | None = None
        self._params: list[tuple[str, torch.Tensor]] | None = None
        self._last_step: int | None = None
        self._rates: list[tuple[str, Any]] = []
        self._images_dropped = 0

    def setup(self, trainer: Trainer, pl_module: LightningModule, stage: str) -> None:
        """Find the trainer's :class:`SumlensLogger` (every rank: a missing one is an error
        on each, not a hang)."""
        found = [lg for lg in trainer.loggers if isinstance(lg, SumlensLogger)]
        if not found:
            names = [type(lg).__name__ for lg in trainer.loggers] or ["none"]
            raise ValueError(
                "SumlensCallback writes into the run of a SumlensLogger, but the Trainer's "
                f"loggers are {', '.join(names)}: pass Trainer(logger=SumlensLogger(...))"
            )
        self._logger = found[0]
        if self._landscape is not None and is_url(self._logger.save_dir):
            raise ValueError(
                "For 'SumlensCallback', collect_landscape needs a local save_dir "
                "(SummaryLandscape reads the weights back from its ckpt_dir), but the "
                f"SumlensLogger writes to {self._logger.save_dir!r}"
            )

    def on_train_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        self._last_step = None
        self._params = None
        if trainer.is_global_zero and self._landscape is not None and self._saver is None:
            assert self._logger is not None
            ckpt_dir = os.path.join(self._logger.log_dir, "ckpt_dir")
            os.makedirs(ckpt_dir, exist_ok=True)  # the umask's mode, as the run's directory
            self._saver = LandscapeSaver(ckpt_dir, self._landscape)

    def on_train_batch_start(
        self, trainer: Trainer, pl_module: LightningModule, batch: Any, batch_idx: int
    ) -> None:
        """Read the learning rates this step trains with, when the step will be collected
        (by its end, a scheduler may have changed them for the next one)."""
        if self._lr and trainer.is_global_zero and self._due(trainer.global_step + 1):
            self._rates = _learning_rates(trainer)

    def on_train_batch_end(
        self,
        trainer: Trainer,
        pl_module: LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
    ) -> None:
        step = trainer.global_step
        if not trainer.is_global_zero or step == self._last_step or step == 0:
            return  # step 0: no optimizer step yet (gradient accumulation)
        due = self._due(step)
        self._last_step = step
        if due:
            assert self._logger is not None
            writer = self._logger.experiment
            for tag, rate in self._rates:
                writer.add_scalar(tag, rate, step)
            self._rates = []
            if self._histograms:
                self._collect_histograms(writer, pl_module, step)
            if self._images:
                self._collect_images(writer, batch, step)
        saver = self._saver
        if saver is not None and saver.unit == "step" and saver.wanted(step):
            saver.save(pl_module, step)

    def on_train_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        saver = self._saver
        epoch = trainer.current_epoch + 1
        if saver is not None and saver.unit == "epoch" and saver.wanted(epoch):
            saver.save(pl_module, epoch)

    def on_train_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        if self._saver is not None:
            per_epoch = trainer.num_training_batches
            self._saver.write_metadata(int(per_epoch) if math.isfinite(per_epoch) else 0)
        if self._images_dropped:
            logger.warning(
                "SumlensCallback: the input images of %d collected steps were dropped because "
                "the summary writer was behind",
                self._images_dropped,
            )
            self._images_dropped = 0

    def on_validation_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Eval lineage: the trainer's ``callback_metrics`` (validation's are the newest)."""
        if not self._eval or trainer.sanity_checking or not trainer.is_global_zero:
            return
        assert self._logger is not None
        lineage = EvaluationLineage(
            metrics=dict(trainer.callback_metrics),
            valid_dataset_size=_dataset_size(trainer.val_dataloaders),
        )
        record_lineage(self._logger.experiment, trainer.global_step, lineage)

    # ---- collection --------------------------------------------------------------------------

    def _due(self, step: int) -> bool:
        """Whether ``step`` is collected: the first of the run, then every ``collect_freq``-th."""
        return self._last_step is None or step % self._freq == 0

    def _collect_histograms(
        self, writer: SummaryWriter, pl_module: LightningModule, step: int
    ) -> None:
        if self._params is None:
            self._params = self._chosen_params(pl_module)
        for tag, param in self._params:
            writer.add_histogram(tag, param.detach(), step)

    def _chosen_params(self, pl_module: LightningModule) -> list[tuple[str, torch.Tensor]]:
        params = [(clean_name(n), p) for n, p in pl_module.named_parameters() if p.requires_grad]
        if self._pattern is None:
            chosen = params[:HISTOGRAM_DEFAULT_COUNT]
        else:
            chosen = [(n, p) for n, p in params if self._pattern.match(n)]
            if params and not chosen:
                logger.warning(
                    "SumlensCallback: histogram_regular %r matches none of the parameter names "
                    "(re.match, from the start of the name; names: %s); no weight histograms",
                    self._pattern.pattern,
                    ", ".join(n for n, _ in params[:10]),
                )
        return [(f"{name}/auto", param) for name, param in chosen]

    def _collect_images(self, writer: SummaryWriter, batch: Any, step: int) -> None:
        images = _first_tensor(batch)
        if images is None or images.dim() != 4 or images.shape[1] not in (1, 3):
            shape = None if images is None else tuple(images.shape)
            logger.info(
                "SumlensCallback: the batch's first tensor (shape %s) is not images (NCHW with "
                "1 or 3 channels); input images are not collected",
                shape,
            )
            self._images = False
            return
        if writer.summary_record.pending_bytes > INPUT_BACKLOG_BYTES:
            self._images_dropped += 1
            return
        writer.add_images("input_data/auto", image_sample(images), step)


def _learning_rates(trainer: Trainer) -> list[tuple[str, Any]]:
    """(tag, learning rate) of every parameter group of every optimizer, as they are
    (a tensor learning rate is not read here)."""
    rates = []
    for i, optimizer in enumerate(trainer.optimizers):
        for j, group in enumerate(optimizer.param_groups):
            if group.get("lr") is not None:
                tag = "learning_rate/auto" if i == j == 0 else f"learning_rate/{i}.{j}/auto"
                rates.append((tag, group["lr"]))
    return rates


def _first_tensor(batch: Any) -> torch.Tensor | None:
    """The batch itself, or the first item of a list/tuple, or the first value of a dict,
    when it is a tensor."""
    if isinstance(batch, list | tuple) and batch:
        batch = batch[0]
    elif isinstance(batch, Mapping) and batch:
        batch = next(iter(batch.values()))
    return batch if isinstance(batch, torch.Tensor) else None


def _dataset_size(loaders: Any) -> int | None:
    """Samples in the validation data (the sum over several loaders), when known."""
    if loaders is None:
        return None
    if not isinstance(loaders, list | tuple):
        loaders = [loaders]
    try:
        return sum(len(loader.dataset) for loader in loaders)
    except (AttributeError, TypeError):
        return None
