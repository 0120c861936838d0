"""``ReduceLROnPlateau``: multiply the learning rate by ``factor`` when the monitored
value stops improving (Keras/MindSpore semantics). Every param group of the optimizer
whose rate is above ``min_lr`` is reduced (MindSpore supports a single rate only).
"""

from __future__ import annotations

import torch

from sumlens._checks import check_bool, check_int, check_number
from sumlens.train.callback import RunContext
from sumlens.train.callbacks._common import get_param
from sumlens.train.callbacks.lr_scheduler import get_lr, set_lr
from sumlens.train.callbacks.monitor import MonitorCallback

__all__ = ["ReduceLROnPlateau"]


class ReduceLROnPlateau(MonitorCallback):
    """After ``patience`` epochs without improvement: ``lr = max(lr * factor, min_lr)``,
    then ``cooldown`` epochs during which no reduction happens."""

    runs_in_fit_eval = False

    # MindSpore's parameters, in its positional order.
    def __init__(
        self, monitor: str = "eval_loss", factor: float = 0.1, patience: int = 10,
        verbose: bool = False, mode: str = "auto", min_delta: float = 1e-4,
        cooldown: int = 0, min_lr: float = 0,
    ) -> None:  # fmt: skip
        super().__init__(monitor=monitor, mode=mode, min_delta=min_delta)
        owner = type(self).__name__
        self.factor = check_number(factor, "factor", owner)
        if not 0.0 < self.factor < 1.0:
            raise ValueError(
                f"For '{owner}', the argument 'factor' must be strictly between 0 and 1, "
                f"but got {factor!r}"
            )
        self.patience = check_int(patience, "patience", owner, 0)
        self.cooldown = check_int(cooldown, "cooldown", owner, 0)
        self.min_lr = check_number(min_lr, "min_lr", owner, finite=False)
        self.verbose = check_bool(verbose, "verbose", owner)
        self.wait = 0
        self.cooldown_counter = 0

    def on_train_begin(self, run_context: RunContext) -> None:
        self.wait = 0
        self.cooldown_counter = 0
        self.best = self._worst()

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        params = run_context.original_args()
        optimizer = params.get("optimizer")
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise ValueError(
                "ReduceLROnPlateau needs cb_params.optimizer to be a torch.optim.Optimizer, "
                f"got {type(optimizer).__name__}"
            )
        current = self.get_monitor_value(params)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                reduced = None
                for group in optimizer.param_groups:
                    old = get_lr(group)
                    if old > self.min_lr:
                        new = max(old * self.factor, self.min_lr)
                        set_lr(group, new)
                        reduced = new if reduced is None else reduced
                if reduced is not None and self.verbose:
                    epoch = get_param(params, "cur_epoch_num", 1)
                    print(
                        f"Epoch {epoch:05d}: ReduceLROnPlateau reducing learning rate to "
                        f"{reduced}.",
                        flush=True,
                    )
                self.cooldown_counter = self.cooldown
                self.wait = 0
