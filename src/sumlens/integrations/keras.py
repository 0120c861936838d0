"""Keras 3 runs recorded by sumlens, on any backend and without TensorFlow.

Keras' own ``TensorBoard`` callback writes through ``tf.summary``, so it needs TensorFlow
even on the torch or JAX backend. Importing this module imports Keras on the torch backend
when no backend is chosen and TensorFlow is not installed
(:mod:`sumlens.integrations.keras_backend`). :class:`SumlensCallback` writes the same things under
the same names through :class:`sumlens.writer.SummaryWriter`: ``epoch_<metric>`` at each
epoch and ``batch_<metric>`` every ``update_freq`` batches, training values in the
``train`` sub-run and validation values in ``validation`` (so TensorBoard draws them as
two lines of one chart), ``evaluation_<metric>_vs_iterations`` after each evaluation,
and ``<weight path>/histogram`` every ``histogram_freq`` epochs. It adds the model's
config and the fit's settings as lineage, and the last validation metrics as evaluation
lineage, which MindInsight compares runs by.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

from sumlens._checks import check_choice, check_instance, check_int
from sumlens._log import warn_once
from sumlens.integrations.keras_backend import load_keras
from sumlens.integrations.lineage import indexed, record_lineage
from sumlens.lineage import EvaluationLineage, TrainLineage, from_config
from sumlens.writer import SummaryWriter
from sumlens.writer.summary_writer import FILE_FORMATS, check_writer_options

# with the torch backend where none is chosen and TensorFlow is absent; Any, as the type
# checker cannot tell a base class from a module loaded at run time
keras: Any = load_keras()
OWNER = "SumlensCallback"
VALIDATION_PREFIX = "val_"


class SumlensCallback(keras.callbacks.Callback):
    """Record ``fit``'s logs, weight histograms and the model's config under ``log_dir``.

    ``update_freq`` is ``"epoch"`` (epoch values only), ``"batch"`` or an int N: the
    training logs of every N-th batch too, numbered by batches since ``fit`` began.
    ``histogram_freq=N`` records every weight as a histogram on each N-th epoch (the
    first included); 0 records none. ``file_format`` is ``"tensorboard"`` or
    ``"mindspore"``. ``log_dir`` may be a URL (``s3://bucket/logs``: see
    :class:`sumlens.SummaryWriter`); ``writer_kwargs`` go to each writer
    (``storage_options``, ``spool_dir``, ``flush_secs`` ...: ``ADAPTER_WRITER_OPTIONS``).

    Batch logs arrive on Keras' callback threads (``async_safe``): Keras turns the
    backend's tensors into numbers there, so the training loop never waits for them.
    """

    async_safe = True

    def __init__(
        self,
        log_dir: str | os.PathLike[str] = "logs",
        *,
        update_freq: str | int = "epoch",
        histogram_freq: int = 0,
        file_format: str = "tensorboard",
        **writer_kwargs: Any,
    ) -> None:
        super().__init__()
        check_instance(log_dir, "log_dir", OWNER, (str, os.PathLike), "a str or os.PathLike")
        self.log_dir = os.fspath(log_dir)
        if isinstance(update_freq, str):
            update_freq = check_choice(update_freq, "update_freq", OWNER, ("epoch", "batch"))
            self.update_freq = 0 if update_freq == "epoch" else 1
        else:
            self.update_freq = check_int(update_freq, "update_freq", OWNER, 1)
        self.histogram_freq = check_int(histogram_freq, "histogram_freq", OWNER, 0)
        self.file_format = check_choice(file_format, "file_format", OWNER, FILE_FORMATS)
        self._writer_kwargs = check_writer_options(writer_kwargs, OWNER)
        self._writers: dict[str, SummaryWriter] = {}
        self._lock = threading.Lock()  # batch logs come from Keras' callback threads
        self._training = False
        self._batches_before_epoch = 0
        self._batches_in_epoch = 0
        self._last_logs: Mapping[str, float] = {}

    # ---- writers ------------------------------------------------------------------------

    def _writer(self, sub_run: str) -> SummaryWriter:
        """The writer of ``train`` or ``validation``, opened at its first use."""
        writer = self._writers.get(sub_run)
        if writer is None:
            path = os.path.join(self.log_dir, sub_run)
            writer = SummaryWriter(path, file_format=self.file_format, **self._writer_kwargs)
            self._writers[sub_run] = writer
        return writer

    def _close(self) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()

    # ---- fit ----------------------------------------------------------------------------

    def on_train_begin(self, logs: Mapping[str, Any] | None = None) -> None:
        """The model's config and the fit's settings as lineage."""
        self._training = True
        self._batches_before_epoch = 0
        self._last_logs = {}
        values: list[Any] = [self._train_lineage()]
        try:
            config = self.model.get_config()
        except NotImplementedError:
            warn_once(
                f"keras-config:{type(self.model).__name__}",
                "SumlensCallback: %s has no get_config(); its config is not in the lineage",
                type(self.model).__name__,
            )
        else:
            values.append(from_config({"model_config": indexed(config)}))
        with self._lock:
            record_lineage(self._writer("train"), 0, *values)

    def on_epoch_begin(self, epoch: int, logs: Mapping[str, Any] | None = None) -> None:
        """Count this epoch's batches from zero."""
        self._batches_in_epoch = 0

    def on_train_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        """Every ``update_freq``-th batch: its logs as ``batch_<name>`` (on Keras' threads)."""
        step = self._batches_before_epoch + batch + 1
        with self._lock:
            self._batches_in_epoch = max(self._batches_in_epoch, batch + 1)
            if not self.update_freq or step % self.update_freq or not logs:
                return
            writer = self._writer("train")
            for name, value in logs.items():
                self._add_scalar(writer, f"batch_{name}", value, step)

    def on_epoch_end(self, epoch: int, logs: Mapping[str, Any] | None = None) -> None:
        """``epoch_<name>`` for the training and validation logs; weight histograms."""
        # Keras has waited for this epoch's batch callbacks before calling this one.
        self._batches_before_epoch += self._batches_in_epoch
        logs = dict(logs or {})
        train = {k: v for k, v in logs.items() if not k.startswith(VALIDATION_PREFIX)}
        validation = {
            k[len(VALIDATION_PREFIX) :]: v
            for k, v in logs.items()
            if k.startswith(VALIDATION_PREFIX)
        }
        learning_rate = self._learning_rate()
        if learning_rate is not None:
            train.setdefault("learning_rate", learning_rate)
        self._last_logs = logs
        with self._lock:
            for sub_run, values in (("train", train), ("validation", validation)):
                if values:
                    writer = self._writer(sub_run)
                    for name, value in values.items():
                        self._add_scalar(writer, f"epoch_{name}", value, epoch)
            if self.histogram_freq and epoch % self.histogram_freq == 0:
                self._add_weights(epoch)

    def on_test_end(self, logs: Mapping[str, Any] | None = None) -> None:
        """``evaluation_<name>_vs_iterations`` at the optimizer's step count."""
        optimizer = getattr(self.model, "optimizer", None)
        iterations = getattr(optimizer, "iterations", None)
        if not logs or iterations is None:
            return
        step = int(keras.ops.convert_to_numpy(iterations))
        with self._lock:
            writer = self._writer("validation")
            for name, value in logs.items():
                self._add_scalar(writer, f"evaluation_{name}_vs_iterations", value, step)
            if not self._training:  # evaluate() alone: nothing else will close the run
                writer.flush()

    def on_train_end(self, logs: Mapping[str, Any] | None = None) -> None:
        """The train lineage again with the final loss, the last validation metrics as
        evaluation lineage; then both sub-runs are closed."""
        final = self._last_logs
        metrics = {
            k[len(VALIDATION_PREFIX) :]: v
            for k, v in final.items()
            if k.startswith(VALIDATION_PREFIX) and isinstance(v, int | float)
        }
        values: list[Any] = [self._train_lineage(final.get("loss"))]
        if metrics:
            values.append(EvaluationLineage(metrics))
        with self._lock:
            record_lineage(self._writer("train"), self._batches_before_epoch, *values)
            self._close()
        self._training = False

    # ---- values -------------------------------------------------------------------------

    @staticmethod
    def _add_scalar(writer: SummaryWriter, tag: str, value: Any, step: int) -> None:
        if isinstance(value, int | float):
            writer.add_scalar(tag, value, step)
        else:  # Keras hands over numbers; what else a callback put into the logs is said once
            warn_once(
                f"keras-log-type:{tag}",
                "SumlensCallback: the log %r is a %s, not a number; it is not recorded",
                tag,
                type(value).__name__,
            )

    def _add_weights(self, epoch: int) -> None:
        writer = self._writer("train")
        on_torch = keras.backend.backend() == "torch"
        for layer in self.model.layers:
            for weight in layer.weights:
                value = weight.value.detach() if on_torch else keras.ops.convert_to_numpy(weight)
                tag = weight.path.replace(":", "_") + "/histogram"
                writer.add_histogram(tag, value, epoch)

    def _learning_rate(self) -> float | None:
        """The optimizer's learning rate, as Keras' TensorBoard callback adds it."""
        optimizer = getattr(self.model, "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # loss scaling
        if not isinstance(optimizer, keras.optimizers.Optimizer):
            return None
        return float(keras.ops.convert_to_numpy(optimizer.learning_rate))

    def _train_lineage(self, loss: Any = None) -> TrainLineage:
        model = self.model
        optimizer = getattr(model, "optimizer", None)
        loss_function = getattr(model, "loss", None)
        if loss_function is not None and not isinstance(loss_function, str):
            loss_function = getattr(loss_function, "__name__", type(loss_function).__name__)
        epochs = self.params.get("epochs") if self.params else None
        return TrainLineage(
            optimizer=None if optimizer is None else type(optimizer).__name__,
            learning_rate=self._learning_rate(),
            loss_function=loss_function,
            epoch=epochs if isinstance(epochs, int) else None,
            network=type(model).__name__,
            loss=float(loss) if isinstance(loss, int | float) else None,
        )
