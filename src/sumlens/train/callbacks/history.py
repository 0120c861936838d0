"""``History``: the per-epoch network output (loss) and evaluation metrics of a run.

As in MindSpore, ``history`` is created once and keeps growing over later runs with the
same instance (create a new ``History`` per run for separate records), and given to
``eval()`` it records the evaluation too (``epoch`` restarts, ``history`` grows);
``fit``'s evaluation does not call it (its metrics reach the training epoch's record).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from sumlens.train.callback import Callback, RunContext, RunParams
from sumlens.train.callbacks._common import get_param

__all__ = ["History"]


def _net_output(outputs: object) -> Any:
    if isinstance(outputs, tuple | list) and outputs and isinstance(outputs[0], torch.Tensor):
        outputs = outputs[0]
    if isinstance(outputs, torch.Tensor):
        return np.mean(outputs.detach().cpu().numpy())
    return outputs


class History(Callback):
    """``history``: ``{"net_output": [...], <metric>: [...]}``, one value per epoch;
    ``epoch``: ``{"epoch": [1, 2, ...]}`` for the current run (``None`` before it)."""

    def __init__(self) -> None:
        self.history: dict[str, list[Any]] = {}
        self.epoch: dict[str, list[int]] | None = None

    runs_in_fit_eval = False

    def on_train_begin(self, run_context: RunContext) -> None:
        self.epoch = {"epoch": []}

    def on_eval_begin(self, run_context: RunContext) -> None:
        self.epoch = {"epoch": []}

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        self._record(run_context.original_args())

    def on_eval_epoch_end(self, run_context: RunContext) -> None:
        self._record(run_context.original_args())

    def _record(self, params: RunParams) -> None:
        if self.epoch is None:
            self.epoch = {"epoch": []}
        self.epoch["epoch"].append(get_param(params, "cur_epoch_num", 1))
        values: dict[str, Any] = {}
        if "net_outputs" in params:
            values["net_output"] = _net_output(params["net_outputs"])
        metrics = params.get("metrics")
        if isinstance(metrics, dict):
            values.update(metrics)
        for key, value in values.items():
            self.history.setdefault(key, []).append(value)
