"""``LossMonitor``: print the training loss and stop on NaN/Inf.

Printing follows the *global* step counter, as MindSpore does: with ``per_print_times=3``
and 4 steps per epoch the lines are ``epoch: 1 step: 3`` and ``epoch: 2 step: 2``. Unlike
MindSpore, a loss given as a tensor inside a tuple is converted to a float too, so the
NaN/Inf check always applies. Under torch.distributed only rank 0 prints; every rank checks.
"""

from __future__ import annotations

import math

from sumlens.train.callback import Callback, RunContext
from sumlens.train.callbacks._common import (
    check_int,
    get_param,
    is_rank_zero,
    loss_value,
    step_in_epoch,
)

__all__ = ["LossMonitor"]


class LossMonitor(Callback):
    """Print ``epoch: E step: S, loss is L`` every ``per_print_times`` steps (0: never).

    A NaN or infinite loss raises ``ValueError`` from the step hook on every step,
    whatever ``per_print_times`` is. In ``fit`` with validation, the epoch's metrics are
    printed at the end of the training epoch.
    """

    def __init__(self, per_print_times: int = 1) -> None:
        self._per_print_times = check_int(per_print_times, "per_print_times", minimum=0)
        self._last_print_step = 0

    @property
    def per_print_times(self) -> int:
        return self._per_print_times

    def step_end(self, run_context: RunContext) -> None:
        params = run_context.original_args()
        loss = loss_value(params.get("net_outputs"))
        step = int(get_param(params, "cur_step_num", 0))
        batch_num = get_param(params, "batch_num", 0)
        epoch = get_param(params, "cur_epoch_num", 1)
        in_epoch = step_in_epoch(params)
        if isinstance(loss, float) and (math.isnan(loss) or math.isinf(loss)):
            raise ValueError(
                f"In epoch: {epoch} step: {in_epoch}, loss is NAN or INF, training process "
                "cannot continue, terminating training."
            )
        if self._per_print_times == 0:
            return
        if step < self._last_print_step:  # the counter went back (resume / rollback)
            sink = bool(params.get("dataset_sink_mode", False))
            stride = max(
                self._per_print_times, batch_num if sink and isinstance(batch_num, int) else 1, 1
            )
            while self._last_print_step >= step:
                self._last_print_step -= stride
        if step - self._last_print_step >= self._per_print_times:
            self._last_print_step = step
            if is_rank_zero():
                print(f"epoch: {epoch} step: {in_epoch}, loss is {loss}", flush=True)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        params = run_context.original_args()
        metrics = params.get("metrics")
        if metrics and is_rank_zero():
            epoch = get_param(params, "cur_epoch_num", 1)
            print(f"Eval result: epoch {epoch}, metrics: {metrics}", flush=True)
