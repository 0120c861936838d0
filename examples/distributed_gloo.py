"""Distributed training on two CPU processes, each rank recording to its own directory.

Summary writers are not shared between processes, so, as the seed docs say, every rank
gets a summary directory of its own: ``<LOGDIR>/rank_<r>`` (file names carry the rank as
well). Two processes are started with ``torch.multiprocessing.spawn``, join a ``gloo``
process group on 127.0.0.1 and train a ``DistributedDataParallel`` MLP with
``sumlens.Model`` on their own shard of synthetic data; gradients are averaged across the
ranks, so both end with the same weights.

What each rank records (``--writer``):

* ``collector``: ``SummaryCollector(summary_dir=<LOGDIR>/rank_<r>, collect_freq=5)`` in
  ``Model.train`` and ``Model.eval``, as in the seed;
* ``record``: a small callback that opens a ``SummaryRecord`` on that directory and
  records the loss and learning rate of every step;
* ``auto`` (default): ``collector`` when ``sumlens.SummaryCollector`` is available, else
  ``record``.

Takes 10-20 s on a 2-vCPU machine (most of it starting the processes and importing torch).

Run: ``python examples/distributed_gloo.py [LOGDIR] [--writer auto|collector|record]``
(default LOGDIR: a fresh temporary folder), then ``sumlens read LOGDIR/rank_0``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import socket
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import sumlens
from sumlens import Callback, Model, RunContext, SummaryRecord
from sumlens.io import describe

WORLD_SIZE = 2
EPOCHS = 2
BATCHES = 40
BATCH_SIZE = 32


class LossAndRateRecorder(Callback):
    """Record the loss and learning rate of every training step with a ``SummaryRecord``."""

    def __init__(self, summary_dir: Path) -> None:
        self.summary_dir = summary_dir
        self.record: SummaryRecord | None = None

    def __enter__(self) -> LossAndRateRecorder:
        self.record = SummaryRecord(self.summary_dir)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.record is not None:
            self.record.close()
            self.record = None

    def on_train_step_end(self, run_context: RunContext) -> None:
        assert self.record is not None
        params = run_context.original_args()
        self.record.add_value("scalar", "loss", params.net_outputs)
        self.record.add_value("scalar", "learning_rate", params.optimizer.param_groups[0]["lr"])
        self.record.record(params.cur_step_num)


def shard(rank: int, batches: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """This rank's batches of a 3-class problem (same labelling rule on every rank)."""
    weights = torch.randn(20, 3, generator=torch.Generator().manual_seed(0))
    gen = torch.Generator().manual_seed(100 + rank)
    data = []
    for _ in range(batches):
        x = torch.randn(BATCH_SIZE, 20, generator=gen)
        data.append((x, (x @ weights).argmax(1)))
    return data


def worker(rank: int, world_size: int, port: int, logdir: str, writer: str) -> None:
    torch.set_num_threads(1)  # two processes on a small machine: do not oversubscribe
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world_size,
        timeout=datetime.timedelta(seconds=60),
    )
    try:
        torch.manual_seed(0)  # same initial weights on every rank (DDP also broadcasts them)
        net = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
        ddp = DistributedDataParallel(net)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
        model = Model(ddp, nn.CrossEntropyLoss(), optimizer, metrics={"acc"})
        summary_dir = Path(logdir) / f"rank_{rank}"  # one directory per rank
        if writer == "collector":
            collector = sumlens.SummaryCollector(summary_dir=str(summary_dir), collect_freq=5)
            model.train(EPOCHS, shard(rank, BATCHES), callbacks=[collector])
            result = model.eval(shard(rank + world_size, 8), callbacks=[collector])
        else:
            model.train(EPOCHS, shard(rank, BATCHES), callbacks=[LossAndRateRecorder(summary_dir)])
            result = model.eval(shard(rank + world_size, 8))
        checksum = sum(float(p.detach().sum()) for p in net.parameters())
        print(f"rank {rank}: eval {result}, weight checksum {checksum:.6f}", flush=True)
        dist.barrier()
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def collector_available() -> bool:
    try:
        return sumlens.SummaryCollector is not None
    except AttributeError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logdir", nargs="?", type=Path, default=None)
    parser.add_argument("--writer", choices=("auto", "collector", "record"), default="auto")
    args = parser.parse_args()
    logdir = args.logdir or Path(tempfile.mkdtemp(prefix="sumlens-"))
    writer = args.writer
    if writer == "auto":
        writer = "collector" if collector_available() else "record"
    print(f"writer: {writer} ({WORLD_SIZE} ranks, gloo on 127.0.0.1)")
    # gloo picks its network interface from the host name unless told: keep it on loopback
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    mp.spawn(worker, args=(WORLD_SIZE, free_port(), str(logdir), writer), nprocs=WORLD_SIZE)
    for rank in range(WORLD_SIZE):
        print(f"wrote {logdir / f'rank_{rank}'}:")
        print(describe(logdir / f"rank_{rank}"))


if __name__ == "__main__":
    main()
