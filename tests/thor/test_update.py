"""The parameter update equals the spec's formula computed independently in numpy.

Three steps with ``frequency=2``: step 0 refreshes the inverses, step 1 reuses them,
step 2 refreshes them again with that step's damping. Every parameter is checked after
every step.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
from helpers.thor_numpy import (
    block_inverse,
    conv_factors,
    conv_patches,
    kronecker_inverses,
    linear_factors,
    momentum_update,
)
from torch import nn

from sumlens.thor import thor

LRS = [0.05, 0.03, 0.02]
DAMPINGS = [0.02, 0.05, 0.1]


class Recorder:
    """Input and output gradient of a module's latest call."""

    def __init__(self, module: nn.Module) -> None:
        self.x: torch.Tensor | None = None
        self.out: torch.Tensor | None = None
        module.register_forward_hook(self._hook)

    def _hook(self, module: nn.Module, inputs: tuple, output: torch.Tensor) -> None:
        self.x = inputs[0].detach().clone()
        output.retain_grad()
        self.out = output

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        assert self.x is not None and self.out is not None and self.out.grad is not None
        return self.x.double().numpy(), self.out.grad.double().numpy()


Preconditioner = Callable[[np.ndarray], np.ndarray]


def _linear_rule(
    rec: Recorder, damping: float, block: int | None, batch: int, scale: float
) -> Preconditioner:
    x, delta = rec.arrays()
    a, g = linear_factors(x, delta, batch, scale)
    a_inv, g_inv = kronecker_inverses(a, g, damping, block)
    return lambda grad: g_inv @ grad @ a_inv


def _conv_rule(
    rec: Recorder, conv: nn.Conv2d, damping: float, block: int | None, batch: int, scale: float
) -> Preconditioner:
    x, delta = rec.arrays()
    patches = conv_patches(x, conv.kernel_size, conv.stride, conv.padding, conv.dilation)  # type: ignore[arg-type]
    a, g, a_norm, g_norm = conv_factors(patches, delta, batch, scale)
    a_inv, g_inv = kronecker_inverses(a, g, damping, block, a_norm, g_norm)
    return lambda grad: (g_inv @ grad.reshape(grad.shape[0], -1) @ a_inv).reshape(grad.shape)


def _check_run(
    net: nn.Module,
    layers: dict[str, nn.Module],
    make_input: Callable[[int], torch.Tensor],
    *,
    block: int | None,
    weight_decay: float = 0.0,
    scale: float = 1.0,
    nesterov: bool = False,
    clip: bool = False,
) -> None:
    batch = 6
    recorders = {name: Recorder(module) for name, module in layers.items()}
    weights = {name: module.weight for name, module in layers.items()}
    opt = thor(
        net,
        LRS,
        torch.tensor(DAMPINGS),
        0.9,
        weight_decay=weight_decay,
        loss_scale=scale,
        batch_size=batch,
        use_nesterov=nesterov,
        decay_filter=lambda p: "bias" not in p.name,
        enable_clip_grad=clip,
        frequency=2,
        block_size=block,
    )
    params = dict(net.named_parameters())
    expected = {name: p.detach().double().numpy().copy() for name, p in params.items()}
    buffers = {name: np.zeros_like(value) for name, value in expected.items()}
    rules: dict[str, Preconditioner] = {}
    for t in range(3):
        loss = net(make_input(t)).pow(2).mean() * scale
        loss.backward()
        if t % 2 == 0:
            for name, module in layers.items():
                rec = recorders[name]
                rules[name] = (
                    _conv_rule(rec, module, DAMPINGS[t], block, batch, scale)
                    if isinstance(module, nn.Conv2d)
                    else _linear_rule(rec, DAMPINGS[t], block, batch, scale)
                )
        for name, p in params.items():
            assert p.grad is not None
            grad = p.grad.double().numpy() / scale
            layer = next((n for n, w in weights.items() if w is p), None)
            if layer is not None:
                grad = rules[layer](grad)
            decay = 0.0 if "bias" in name else weight_decay
            expected[name], buffers[name] = momentum_update(
                expected[name], grad, buffers[name], LRS[t], 0.9, decay, clip, nesterov
            )
        opt.step()
        opt.zero_grad()
        assert_parameters(params, expected, t)


def assert_parameters(params: dict[str, torch.Tensor], expected: dict, step: int) -> None:
    """Each parameter equals the numpy reference after ``step``."""
    for name, p in params.items():
        np.testing.assert_allclose(
            p.detach().double().numpy(),
            expected[name],
            rtol=2e-4,
            atol=2e-5,
            err_msg=f"parameter {name} after step {step}",
        )


@pytest.mark.parametrize("block", [None, 4], ids=["whole", "split4"])
@pytest.mark.parametrize(
    "options",
    [{}, {"weight_decay": 0.1, "nesterov": True}, {"scale": 8.0, "clip": True}],
    ids=["plain", "wd-nesterov", "scaled-clipped"],
)
def test_linear_update_matches_numpy(block: int | None, options: dict) -> None:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3))
    gen = torch.Generator().manual_seed(1)
    _check_run(
        net,
        {"0": net[0], "2": net[2]},
        lambda t: torch.randn(6, 5, generator=gen),
        block=block,
        **options,
    )


@pytest.mark.parametrize("block", [None, 5], ids=["whole", "split5"])
@pytest.mark.parametrize(
    "options", [{}, {"weight_decay": 0.05, "scale": 4.0}], ids=["plain", "wd-scaled"]
)
def test_conv2d_update_matches_numpy(block: int | None, options: dict) -> None:
    torch.manual_seed(2)
    conv = nn.Conv2d(2, 3, 3, padding=2, dilation=2)
    net = nn.Sequential(conv, nn.ReLU(), nn.Flatten(), nn.Linear(3 * 5 * 5, 4))
    gen = torch.Generator().manual_seed(3)
    _check_run(
        net,
        {"0": conv, "3": net[3]},
        lambda t: torch.randn(6, 2, 5, 5, generator=gen),
        block=block,
        **options,
    )


def test_embedding_and_layernorm_update_matches_numpy() -> None:
    torch.manual_seed(4)
    emb, norm, head = nn.Embedding(6, 4), nn.LayerNorm(4), nn.Linear(12, 2)
    net = nn.Sequential(emb, norm, nn.Flatten(), head)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-0.5, 0.5)
    emb_rec, head_rec = Recorder(emb), Recorder(head)
    batch = 5
    opt = thor(net, LRS, DAMPINGS, 0.9, batch_size=batch, frequency=2)
    params = dict(net.named_parameters())
    expected = {name: p.detach().double().numpy().copy() for name, p in params.items()}
    buffers = {name: np.zeros_like(value) for name, value in expected.items()}
    gen = torch.Generator().manual_seed(5)
    for t in range(3):
        ids = torch.randint(0, 6, (4, 3), generator=gen)
        net(ids).pow(2).mean().backward()
        if t % 2 == 0:
            counts = np.bincount(ids.reshape(-1).numpy(), minlength=6)
            emb_a_inv = 1.0 / (counts / batch + math.sqrt(DAMPINGS[t]))
            _, delta = emb_rec.arrays()
            delta = delta.reshape(-1, 4)
            emb_g = delta.T @ delta / delta.shape[0] * batch**2
            emb_g_inv = block_inverse(emb_g, math.sqrt(DAMPINGS[t]), None)
            head_rule = _linear_rule(head_rec, DAMPINGS[t], None, batch, 1.0)
        for name, p in params.items():
            assert p.grad is not None
            grad = p.grad.double().numpy()
            if name == "0.weight":
                grad = (emb_a_inv[:, None] * grad) @ emb_g_inv
            elif name.startswith("1."):
                grad = grad / (grad**2 / batch + math.sqrt(DAMPINGS[t]))
            elif name == "3.weight":
                grad = head_rule(grad)
            expected[name], buffers[name] = momentum_update(
                expected[name], grad, buffers[name], LRS[t], 0.9
            )
        opt.step()
        opt.zero_grad()
        assert_parameters(params, expected, t)


def test_block_split_changes_the_update() -> None:
    """The split is not a no-op: the same run with and without it ends elsewhere."""
    results = []
    for block in (None, 2):
        torch.manual_seed(6)
        net = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 2))
        opt = thor(net, 0.1, 0.01, 0.9, frequency=2, block_size=block)
        gen = torch.Generator().manual_seed(7)
        for _ in range(2):
            net(torch.randn(8, 6, generator=gen)).pow(2).mean().backward()
            opt.step()
            opt.zero_grad()
        results.append(torch.cat([p.detach().reshape(-1) for p in net.parameters()]))
    assert not torch.allclose(results[0], results[1], atol=1e-4)
