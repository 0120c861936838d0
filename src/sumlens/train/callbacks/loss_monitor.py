"""``LossMonitor``: print the training loss and stop on NaN/Inf.

Printing follows the *global* step counter, as MindSpore does: with ``per_print_times=3``
and 4 steps per epoch the lines are ``epoch: 1 step: 3`` and ``epoch: 2 step: 2``. Unlike
MindSpore, a loss given as a tensor inside a tuple is converted to a float too, so the
NaN/Inf check always applies. Under torch.distributed only rank 0 prints; every rank checks.

A loss on a CUDA device is not waited for: its copy to the host starts at the step's end
and the step is printed and checked at a later step's end, once the copy has arrived
(at the latest at the end of the epoch), so training never stalls on the monitor. A
NaN loss then stops training a step or two after it happened, naming its own step.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any

import torch

from sumlens._checks import check_int
from sumlens.summary.convert import PendingArray, copy_to_host_async
from sumlens.train.callback import Callback, RunContext, RunParams
from sumlens.train.callbacks._common import get_param, is_rank_zero, loss_value, step_in_epoch

__all__ = ["LossMonitor"]


@dataclass(frozen=True, slots=True)
class _StepInfo:
    """Where a loss came from, kept until the loss can be reported."""

    step: int
    epoch: Any
    in_epoch: Any
    batch_num: Any
    sink: bool


def _cuda_loss(net_outputs: object) -> torch.Tensor | None:
    """The mean loss as a one-element CUDA tensor (None unless the loss is on a CUDA device)."""
    value = net_outputs
    if isinstance(value, tuple | list) and value:
        value = value[0]
    if not isinstance(value, torch.Tensor) or not value.is_cuda:
        return None
    if value.numel() == 0 or value.is_complex():
        return None
    return value.detach().float().mean()


class LossMonitor(Callback):
    """Print ``epoch: E step: S, loss is L`` every ``per_print_times`` steps (0: never).

    A NaN or infinite loss raises ``ValueError`` from a step hook, whatever
    ``per_print_times`` is (for a loss on a CUDA device, once its copy has arrived: see
    the module docstring). In ``fit`` with validation, the epoch's metrics are
    printed at the end of the training epoch. Given to ``eval``, it reports the
    evaluation steps' losses the same way (MindSpore's LossMonitor does too); ``fit``'s
    evaluation does not call it.
    """

    runs_in_fit_eval = False

    def __init__(self, per_print_times: int = 1) -> None:
        self._per_print_times = check_int(per_print_times, "per_print_times", "LossMonitor", 0)
        self._last_print_step = 0
        self._in_flight: deque[tuple[PendingArray, _StepInfo]] = deque()

    @property
    def per_print_times(self) -> int:
        return self._per_print_times

    def on_train_step_end(self, run_context: RunContext) -> None:
        self._step_end(run_context.original_args())

    def on_eval_step_end(self, run_context: RunContext) -> None:
        self._step_end(run_context.original_args())

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        self._report_arrived(wait=True)
        params = run_context.original_args()
        metrics = params.get("metrics")
        if metrics and is_rank_zero():
            epoch = get_param(params, "cur_epoch_num", 1)
            print(f"Eval result: epoch {epoch}, metrics: {metrics}", flush=True)

    def on_eval_epoch_end(self, run_context: RunContext) -> None:
        self._report_arrived(wait=True)

    def on_train_end(self, run_context: RunContext) -> None:
        self._report_arrived(wait=True)

    def on_eval_end(self, run_context: RunContext) -> None:
        self._report_arrived(wait=True)

    def _step_end(self, params: RunParams) -> None:
        info = _StepInfo(
            step=int(get_param(params, "cur_step_num", 0)),
            epoch=get_param(params, "cur_epoch_num", 1),
            in_epoch=step_in_epoch(params),
            batch_num=get_param(params, "batch_num", 0),
            sink=bool(params.get("dataset_sink_mode", False)),
        )
        device_loss = _cuda_loss(params.get("net_outputs"))
        if device_loss is not None:
            self._in_flight.append((copy_to_host_async(device_loss), info))
        else:
            self._report_arrived(wait=True)  # keep the order of the lines
            self._report(loss_value(params.get("net_outputs")), info)
        self._report_arrived(wait=False)

    def _report_arrived(self, wait: bool) -> None:
        """Report the device losses whose copies have arrived, oldest first (all: ``wait``)."""
        in_flight = self._in_flight
        while in_flight and (wait or in_flight[0][0].done()):
            pending, info = in_flight.popleft()
            self._report(float(pending.result()), info)

    def _report(self, loss: object, info: _StepInfo) -> None:
        """Check one step's loss and print it when due."""
        step, epoch, in_epoch = info.step, info.epoch, info.in_epoch
        if isinstance(loss, float) and (math.isnan(loss) or math.isinf(loss)):
            self._in_flight.clear()
            raise ValueError(
                f"In epoch: {epoch} step: {in_epoch}, loss is NAN or INF, training process "
                "cannot continue, terminating training."
            )
        if self._per_print_times == 0:
            return
        if step < self._last_print_step:  # the counter went back (resume / rollback)
            batch_num = info.batch_num
            stride = max(
                self._per_print_times,
                batch_num if info.sink and isinstance(batch_num, int) else 1,
                1,
            )
            while self._last_print_step >= step:
                self._last_print_step -= stride
        if step - self._last_print_step >= self._per_print_times:
            self._last_print_step = step
            if is_rank_zero():
                print(f"epoch: {epoch} step: {in_epoch}, loss is {loss}", flush=True)
