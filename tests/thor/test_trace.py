"""The opt-in trace criterion (``trace_threshold``): a layer is refreshed at a curvature
step only when the trace of A or G moved by more than the threshold since its last
refresh."""

from __future__ import annotations

import torch
from torch import nn

from sumlens.thor import thor


def _run(threshold: float, same_batch: bool, lr: float) -> tuple[int, dict[str, int]]:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2))
    opt = thor(net, lr, 0.01, 0.9, frequency=2, trace_threshold=threshold)
    gen = torch.Generator().manual_seed(1)
    fixed = torch.randn(8, 4, generator=gen)
    for _ in range(6):  # curvature steps 0, 2, 4
        x = fixed if same_batch else torch.randn(8, 4, generator=gen)
        net(x).pow(2).mean().backward()
        opt.step()
        opt.zero_grad()
    layers = opt.state_dict()["thor"]["layers"]
    return opt.factorizations, {name: entry["inverse_step"] for name, entry in layers.items()}


def test_unchanged_statistics_keep_the_stale_inverses() -> None:
    assert _run(0.0, same_batch=True, lr=0.0) == (1, {"0": 0, "2": 0})


def test_changed_statistics_refresh() -> None:
    assert _run(0.0, same_batch=False, lr=0.1) == (3, {"0": 4, "2": 4})


def test_a_large_threshold_never_refreshes_again() -> None:
    assert _run(1e9, same_batch=False, lr=0.1) == (1, {"0": 0, "2": 0})
