"""Callbacks without ``Model``: drive a ``CallbackList`` from a hand-written loop.

Any training loop can feed the callbacks that ``Model.train`` would call: it owns the run
parameters (``RunParams``, MindSpore's ``cb_params``), wraps them in a ``RunContext``,
enters the ``CallbackList`` and calls its hooks at the right moments, keeping
``cur_epoch_num``, ``cur_step_num``, ``train_dataset_element`` and ``net_outputs`` up to
date. Here the list holds a ``LossMonitor`` (prints the loss, stops on NaN) and a
``SummaryCollector`` (loss, learning rate, parameter histograms and lineage, as with
``Model``). A stop requested by a callback is honoured as ``Model`` does.

Trains a small MLP on synthetic data for 2 epochs of 50 steps (a few seconds on CPU).

Run: ``python examples/hand_driven_callbacks.py [LOGDIR]`` (default: a fresh temporary
folder), then ``sumlens read LOGDIR``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import torch
from torch import nn

from sumlens import LossMonitor, SummaryCollector
from sumlens.io import describe
from sumlens.train import CallbackList, RunContext, RunParams

EPOCHS = 2
BATCHES = 50
BATCH_SIZE = 32


def synthetic_data(batches: int, seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """A 3-class problem whose labels come from a fixed random linear map."""
    gen = torch.Generator().manual_seed(seed)
    weights = torch.randn(20, 3, generator=gen)
    data = []
    for _ in range(batches):
        x = torch.randn(BATCH_SIZE, 20, generator=gen)
        data.append((x, (x @ weights).argmax(1)))
    return data


def train(logdir: Path) -> None:
    torch.manual_seed(0)
    loader = synthetic_data(BATCHES, seed=1)
    net = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    callbacks = [LossMonitor(per_print_times=25), SummaryCollector(str(logdir), collect_freq=5)]

    params = RunParams(
        mode="train",
        network=net,
        train_network=net,
        optimizer=opt,
        loss_fn=loss_fn,
        epoch_num=EPOCHS,
        batch_num=len(loader),
        cur_epoch_num=0,
        cur_step_num=0,
        dataset_sink_mode=False,
        train_dataset=loader,
        train_dataset_element=None,
        net_outputs=None,
    )
    context = RunContext(params)
    with CallbackList(callbacks) as cbs:  # enters (and at the end exits) every callback
        params.list_callback = cbs.callbacks
        cbs.on_train_begin(context)
        for epoch in range(EPOCHS):
            params.cur_epoch_num = epoch + 1
            cbs.on_train_epoch_begin(context)
            for x, y in loader:
                params.cur_step_num += 1
                params.train_dataset_element = (x, y)
                cbs.on_train_step_begin(context)
                loss = loss_fn(net(x), y)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                params.net_outputs = loss.detach()
                cbs.on_train_step_end(context)
                if context.get_stop_requested():
                    break
            cbs.on_train_epoch_end(context)
            if context.get_stop_requested():
                break
        cbs.on_train_end(context)


def main() -> None:
    logdir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="sumlens-"))
    train(logdir)
    print(f"wrote {logdir}:")
    print(describe(logdir))


if __name__ == "__main__":
    main()
