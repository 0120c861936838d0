"""``EarlyStopping``: stop training when the monitored value stops improving.

Keras semantics, not MindSpore 2.10's: training stops when
``wait >= patience`` after a *non-improving* epoch (MindSpore with the default
``patience=0`` always stops after the first epoch), ``baseline`` is honoured (MindSpore
replaces it with ``min_delta``), and a value of 0 counts (MindSpore skips it).
"""

from __future__ import annotations

import copy

import torch

from sumlens._checks import check_bool, check_int
from sumlens.train.callback import RunContext
from sumlens.train.callbacks._common import get_param
from sumlens.train.callbacks.monitor import MonitorCallback

__all__ = ["EarlyStopping"]


class EarlyStopping(MonitorCallback):
    """Request a stop after ``patience`` epochs without improvement of ``monitor``.

    An epoch improves when its value beats the best so far by more than ``min_delta``
    (direction: ``mode``, or from the name with ``"auto"``). With ``baseline`` the
    patience count restarts only on epochs that also beat the baseline.
    ``restore_best_weights`` loads the best epoch's weights into ``train_network`` (or
    ``network``) when stopping.
    """

    runs_in_fit_eval = False

    def __init__(
        self,
        monitor: str = "eval_loss",
        min_delta: float = 0,
        patience: int = 0,
        verbose: bool = False,
        mode: str = "auto",
        baseline: float | None = None,
        restore_best_weights: bool = False,
    ) -> None:
        super().__init__(monitor=monitor, mode=mode, min_delta=min_delta, baseline=baseline)
        owner = type(self).__name__
        self.patience = check_int(patience, "patience", owner, 0)
        self.verbose = check_bool(verbose, "verbose", owner)
        self.restore_best_weights = check_bool(restore_best_weights, "restore_best_weights", owner)
        self.wait = 0
        self.stopped_epoch = 0
        self.best_epoch = 0
        self.best_weights: dict[str, torch.Tensor] | None = None

    @staticmethod
    def _network(params: dict) -> torch.nn.Module | None:
        network = get_param(params, "train_network") or get_param(params, "network")
        return network if isinstance(network, torch.nn.Module) else None

    def _store_weights(self, params: dict) -> None:
        network = self._network(params)
        if network is not None:
            self.best_weights = copy.deepcopy(
                {k: v.detach().clone() for k, v in network.state_dict().items()}
            )

    def on_train_begin(self, run_context: RunContext) -> None:
        self.wait = 0
        self.stopped_epoch = 0
        self.best_epoch = 0
        self.best = self._worst()
        self.best_weights = None

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        params = run_context.original_args()
        current = self.get_monitor_value(params)
        if current is None:
            return
        epoch = get_param(params, "cur_epoch_num", 1)
        if self.restore_best_weights and self.best_weights is None:
            self._store_weights(params)
        self.wait += 1
        if self.is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self._store_weights(params)
            if self.baseline is None or self.is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience:
            self.stopped_epoch = epoch
            run_context.request_stop()
            if self.restore_best_weights and self.best_weights is not None:
                network = self._network(params)
                if network is not None:
                    if self.verbose:
                        print("Restoring model weights from the end of the best epoch.", flush=True)
                    network.load_state_dict(self.best_weights)

    def on_train_end(self, run_context: RunContext) -> None:
        if self.stopped_epoch > 0 and self.verbose:
            print(f"Epoch {self.stopped_epoch:05d}: early stopping", flush=True)
