"""Two gloo ranks with different data end with the same factors: the mean of the ranks'
own factors, one all-reduce per ``split_indices`` group."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

from sumlens.thor import thor

WORLD_SIZE = 2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _worker(rank: int, port: int, out: str) -> None:
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE
    )
    try:
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        opt = thor(net, 0.1, 0.01, 0.9, batch_size=5, frequency=2, split_indices=[0])
        inputs: dict[str, torch.Tensor] = {}
        outputs: dict[str, torch.Tensor] = {}
        for name in ("0", "2"):

            def keep(
                module: nn.Module, args: tuple, output: torch.Tensor, name: str = name
            ) -> None:
                inputs[name] = args[0].detach()
                output.retain_grad()
                outputs[name] = output

            net.get_submodule(name).register_forward_hook(keep)
        x = torch.randn(5, 3, generator=torch.Generator().manual_seed(10 + rank))
        net(x).pow(2).mean().backward()
        local = {}
        for name in ("0", "2"):
            a, d = inputs[name].double(), outputs[name].grad.double()  # type: ignore[union-attr]
            local[name] = (a.T @ a / 5, d.T @ d / 5 * 25)
        opt.step()
        torch.save(
            {
                "local": local,
                "shared": {n: (f.a.double(), f.g.double()) for n, f in opt.factors.items()},
            },
            Path(out) / f"rank{rank}.pt",
        )
    finally:
        dist.destroy_process_group()


def test_factors_are_averaged_across_ranks(tmp_path: Path) -> None:
    mp.start_processes(
        _worker, args=(_free_port(), str(tmp_path)), nprocs=WORLD_SIZE, start_method="spawn"
    )
    results = [torch.load(tmp_path / f"rank{r}.pt") for r in range(WORLD_SIZE)]
    for name in ("0", "2"):
        for which in (0, 1):
            mean = sum(r["local"][name][which].numpy() for r in results) / WORLD_SIZE
            assert not np.allclose(results[0]["local"][name][which], mean)
            for r in results:
                np.testing.assert_allclose(r["shared"][name][which].numpy(), mean, rtol=1e-5)
