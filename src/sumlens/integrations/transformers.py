"""Hugging Face ``Trainer`` runs recorded by sumlens: ``Trainer(callbacks=[SumlensCallback()])``.

``report_to`` is a closed list, so a third-party tracker enters as a ``TrainerCallback``.
:class:`SumlensCallback` writes what ``transformers``' own TensorBoard callback writes,
under the same names (``train/loss``, ``train/learning_rate``, ``eval/loss`` ...; the
``args`` and ``model_config`` texts), through :class:`sumlens.writer.SummaryWriter`, and
adds what MindInsight compares runs by: the ``TrainingArguments`` and the model's config
as lineage hyper-parameters, each evaluation's metrics as evaluation lineage, and, when
asked, gradient histograms every ``histogram_freq`` optimizer steps.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sized
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from sumlens._checks import check_choice, check_instance, check_int
from sumlens._log import warn_once
from sumlens.integrations.lineage import record_lineage
from sumlens.lineage import EvaluationLineage, TrainLineage, from_config
from sumlens.writer import SummaryWriter
from sumlens.writer.summary_writer import FILE_FORMATS, check_writer_options, default_log_dir

OWNER = "SumlensCallback"

SECTIONS = (("eval_", "eval/"), ("test_", "test/"))
"""How ``transformers``' TensorBoard callback names a logged key: these prefixes become a
section of their own, every other key goes under ``train/``."""


def tag_of(key: str) -> str:
    """The tag ``transformers``' TensorBoard callback gives the logged key ``key``."""
    for prefix, section in SECTIONS:
        if key.startswith(prefix):
            return section + key[len(prefix) :]
    return "train/" + key


class SumlensCallback(TrainerCallback):
    """Record a ``Trainer``'s logs, hyper-parameters, evaluations and (optionally) gradients.

    Only the world's process zero writes. The run goes to ``log_dir``; without one, to
    where ``transformers``' TensorBoard callback would write (``$TENSORBOARD_LOGGING_DIR``,
    else ``args.logging_dir`` where that exists, else ``<output_dir>/runs/<date>_<host>``),
    a trial of a hyper-parameter search to a sub-directory named after the trial.
    ``file_format`` is ``"tensorboard"`` or ``"mindspore"``. ``log_dir`` may be a URL
    (``s3://bucket/runs``: see :class:`sumlens.SummaryWriter`); ``writer_kwargs`` go to the
    writer (``storage_options``, ``spool_dir``, ``flush_secs`` ...: ``ADAPTER_WRITER_OPTIONS``).
    ``histogram_freq=N`` records the gradients of every parameter as histograms
    (``gradients/<name>``) on each N-th optimizer step, just before the step; 0 (the
    default) records none. Other steps cost one integer test: nothing is copied or
    synchronised.
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str] | None = None,
        *,
        file_format: str = "tensorboard",
        histogram_freq: int = 0,
        **writer_kwargs: Any,
    ) -> None:
        allowed = "a str or os.PathLike"
        check_instance(log_dir, "log_dir", OWNER, (str, os.PathLike), allowed, allow_none=True)
        self.log_dir = None if log_dir is None else os.fspath(log_dir)
        self.file_format = check_choice(file_format, "file_format", OWNER, FILE_FORMATS)
        self.histogram_freq = check_int(histogram_freq, "histogram_freq", OWNER, 0)
        self._writer_kwargs = check_writer_options(writer_kwargs, OWNER)
        self.writer: SummaryWriter | None = None
        self._default_dir: str | None = None
        self._training = False
        self._train_loss: float | None = None

    # ---- the writer ---------------------------------------------------------------------

    def _run_dir(self, args: TrainingArguments, state: TrainerState) -> str:
        if self.log_dir is not None:
            base = self.log_dir
        else:
            if self._default_dir is None:  # one directory for every train() of this callback
                self._default_dir = (
                    os.environ.get("TENSORBOARD_LOGGING_DIR")
                    or getattr(args, "logging_dir", None)  # transformers < 5
                    # typed Optional, output_dir is set by TrainingArguments.__post_init__
                    or os.path.join(args.output_dir, default_log_dir())  # type: ignore[arg-type]
                )
            base = os.path.expanduser(self._default_dir)
        if state.is_hyper_param_search and state.trial_name:
            return os.path.join(base, state.trial_name)
        return base

    def _open(self, args: TrainingArguments, state: TrainerState) -> SummaryWriter:
        if self.writer is None:
            self.writer = SummaryWriter(
                self._run_dir(args, state), file_format=self.file_format, **self._writer_kwargs
            )
        return self.writer

    # ---- Trainer events -----------------------------------------------------------------

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        """The arguments and the model's config, as text and as lineage."""
        if not state.is_world_process_zero:
            return
        writer = self._open(args, state)
        self._training = True
        self._train_loss = None
        writer.add_text("args", args.to_json_string())
        model = kwargs.get("model")
        config = getattr(model, "config", None)
        hyper: dict[str, Any] = {"args": args.to_dict()}
        if config is not None:
            writer.add_text("model_config", config.to_json_string())
            hyper["model_config"] = config.to_dict()
        record_lineage(
            writer, state.global_step, from_config(hyper), self._train_lineage(args, state, kwargs)
        )

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Numbers as scalars, strings as text, tagged as ``transformers`` tags them."""
        if not state.is_world_process_zero or not logs:
            return
        writer = self._open(args, state)
        step = state.global_step
        for key, value in logs.items():
            tag = tag_of(key)
            if isinstance(value, int | float):
                writer.add_scalar(tag, value, step)
            elif isinstance(value, str):
                writer.add_text(tag, value, step)
            else:
                warn_once(
                    f"hf-log-type:{key}",
                    "SumlensCallback: the Trainer logged %r as a %s, neither a number nor a "
                    "str; it is not recorded",
                    key,
                    type(value).__name__,
                )
        if "train_loss" in logs:
            self._train_loss = logs["train_loss"]
        elif "loss" in logs:
            self._train_loss = logs["loss"]

    def on_evaluate(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        metrics: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """The metrics as evaluation lineage (``on_log`` has written them as scalars)."""
        if not state.is_world_process_zero or not metrics:
            return
        writer = self._open(args, state)
        numbers = {}
        for key, value in metrics.items():
            if isinstance(value, int | float | str):
                numbers[key] = value
            else:
                warn_once(
                    f"hf-metric-type:{key}",
                    "SumlensCallback: the metric %r is a %s, not a number; it is left out of "
                    "the evaluation lineage",
                    key,
                    type(value).__name__,
                )
        size = _dataset_size(kwargs.get("eval_dataloader"))
        record_lineage(
            writer, state.global_step, EvaluationLineage(numbers, valid_dataset_size=size)
        )
        if not self._training:
            writer.flush()  # evaluate() outside train(): no on_train_end will close the run

    def on_pre_optimizer_step(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        """Every ``histogram_freq``-th step: each parameter's gradient as a histogram."""
        freq = self.histogram_freq
        if not freq or (state.global_step + 1) % freq or not state.is_world_process_zero:
            return
        model = kwargs.get("model")
        if model is None:
            return
        writer = self._open(args, state)
        step = state.global_step + 1  # the step this update completes, as on_log numbers it
        for name, parameter in model.named_parameters():
            if parameter.grad is not None:
                writer.add_histogram(f"gradients/{name}", parameter.grad, step)

    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        """The train lineage again, now with the final loss; then the run is closed."""
        if self.writer is None:
            return
        if state.is_world_process_zero:
            lineage = self._train_lineage(args, state, kwargs, loss=self._train_loss)
            record_lineage(self.writer, state.global_step, lineage)
        self.writer.close()
        self.writer = None
        self._training = False

    # ---- lineage ------------------------------------------------------------------------

    def _train_lineage(
        self,
        args: TrainingArguments,
        state: TrainerState,
        objects: Mapping[str, Any],
        loss: float | None = None,
    ) -> TrainLineage:
        optimizer = objects.get("optimizer")
        optimizer = getattr(optimizer, "optimizer", optimizer)  # accelerate's wrapper
        model = objects.get("model")
        mode = args.parallel_mode
        return TrainLineage(
            optimizer=None if optimizer is None else type(optimizer).__name__,
            learning_rate=float(args.learning_rate),
            epoch=int(state.num_train_epochs) or None,
            parallel_mode=str(getattr(mode, "value", mode)),
            device_num=int(args.world_size),
            batch_size=state.train_batch_size or args.per_device_train_batch_size,
            train_dataset_size=_dataset_size(objects.get("train_dataloader")),
            network=None if model is None else type(model).__name__,
            loss=None if loss is None else float(loss),
        )


def _dataset_size(loader: Any) -> int | None:
    """The number of samples a DataLoader reads, when its dataset knows it."""
    dataset = getattr(loader, "dataset", None)
    return len(dataset) if isinstance(dataset, Sized) else None
