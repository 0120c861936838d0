"""A tiny training loop that drives a CallbackList the way a driver does (for callback tests)."""

from __future__ import annotations

import torch

from sumlens.train.callback import CallbackList, RunContext, RunParams


def drive(
    callbacks,
    epochs=2,
    steps=4,
    *,
    outputs=None,
    results=None,
    on_step=None,
    net=None,
    opt=None,
    initial_step=0,
):
    """Run a tiny SGD training loop through a CallbackList, the way a driver does."""
    torch.manual_seed(0)
    net = net if net is not None else torch.nn.Linear(2, 1)
    opt = opt if opt is not None else torch.optim.SGD(net.parameters(), lr=0.1)
    params = RunParams(
        mode="train",
        network=net,
        train_network=net,
        optimizer=opt,
        epoch_num=epochs,
        batch_num=steps,
        cur_epoch_num=0,
        cur_step_num=initial_step,
        dataset_sink_mode=False,
    )
    context = RunContext(params)
    with CallbackList(callbacks) as cbs:
        cbs.on_train_begin(context)
        for epoch in range(1, epochs + 1):
            params.cur_epoch_num = epoch
            cbs.on_train_epoch_begin(context)
            for step in range(1, steps + 1):
                params.cur_step_num += 1
                cbs.on_train_step_begin(context)
                x = torch.randn(3, 2)
                loss = net(x).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                params.net_outputs = loss.detach() if outputs is None else outputs(epoch, step)
                if on_step is not None:
                    on_step(params)
                cbs.on_train_step_end(context)
                if context.get_stop_requested():
                    break
            if results is not None:
                params.metrics = dict(results(epoch))
                params.eval_results = dict(results(epoch))
            cbs.on_train_epoch_end(context)
            params.pop("metrics", None)
            params.pop("eval_results", None)
            if context.get_stop_requested():
                break
        cbs.on_train_end(context)
    return params, context
