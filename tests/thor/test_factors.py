"""The curvature factors equal an explicit numpy computation from the layer's inputs and
output gradients (captured here by the test's own hooks)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers.thor_numpy import conv_factors, conv_patches, linear_factors
from torch import nn

from sumlens.thor import ConvertModelUtils, thor


class Recorder:
    """The inputs and output gradients of one module, by its own hooks."""

    def __init__(self, module: nn.Module) -> None:
        self.inputs: list[torch.Tensor] = []
        self.outputs: list[torch.Tensor] = []
        module.register_forward_hook(self._hook)

    def _hook(self, module: nn.Module, inputs: tuple, output: torch.Tensor) -> None:
        self.inputs.append(inputs[0].detach().clone())
        output.retain_grad()
        self.outputs.append(output)

    def x(self) -> np.ndarray:
        return self.inputs[-1].double().numpy()

    def delta(self) -> np.ndarray:
        grad = self.outputs[-1].grad
        assert grad is not None
        return grad.double().numpy()


def _one_step(net: nn.Module, loss: torch.Tensor, opt: torch.optim.Optimizer) -> None:
    loss.backward()
    opt.step()
    opt.zero_grad()


def test_linear_factors_with_batch_rescale_and_sequence_inputs() -> None:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 3))
    first, second = Recorder(net[0]), Recorder(net[2])
    opt = thor(net, 0.1, 0.01, 0.9, batch_size=8, frequency=2)
    x = torch.randn(4, 2, 5)  # (N, T, in): every (sample, position) is a row
    _one_step(net, net(x).pow(2).mean(), opt)

    for name, rec in (("0", first), ("2", second)):
        a, g = linear_factors(rec.x(), rec.delta(), batch_size=8)
        factors = opt.factors[name]
        assert factors.a.dtype == torch.float32 and factors.g.dtype == torch.float32
        np.testing.assert_allclose(factors.a.numpy(), a, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(factors.g.numpy(), g, rtol=1e-5, atol=1e-8)
        assert (factors.a_norm, factors.g_norm) == (1.0, 1.0)


@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "dilation"),
    [
        ((3, 3), (1, 1), (1, 1), (1, 1)),
        ((3, 3), (1, 1), (2, 2), (2, 2)),
        ((3, 2), (2, 1), (1, 0), (1, 2)),
    ],
    ids=["plain", "dilated", "strided-rect"],
)
@pytest.mark.parametrize("mode", ["kfc", "batch_mean"])
def test_conv2d_factors(
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    mode: str,
) -> None:
    torch.manual_seed(1)
    conv = nn.Conv2d(2, 3, kernel, stride=stride, padding=padding, dilation=dilation)
    net = nn.Sequential(conv, nn.ReLU(), nn.Flatten())
    rec = Recorder(conv)
    opt = thor(net, 0.1, 0.01, 0.9, loss_scale=4.0, batch_size=5, frequency=2, conv_stats=mode)
    x = torch.randn(5, 2, 7, 6)
    _one_step(net, net(x).sum() * 4.0, opt)

    patches = conv_patches(rec.x(), kernel, stride, padding, dilation)
    a, g, a_norm, g_norm = conv_factors(patches, rec.delta(), 5, scale=4.0, mode=mode)
    factors = opt.factors["0"]
    np.testing.assert_allclose(factors.a.numpy(), a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(factors.g.numpy(), g, rtol=1e-5, atol=1e-6)
    assert (factors.a_norm, factors.g_norm) == (a_norm, g_norm)


@pytest.mark.parametrize("padding_mode", ["reflect", "circular"])
def test_conv2d_factors_with_non_zero_padding_mode(padding_mode: str) -> None:
    torch.manual_seed(2)
    conv = nn.Conv2d(2, 2, 3, padding=1, padding_mode=padding_mode)
    rec = Recorder(conv)
    opt = thor(conv, 0.1, 0.01, 0.9, frequency=2)
    _one_step(conv, conv(torch.randn(3, 2, 5, 5)).pow(2).sum(), opt)

    np_mode = "wrap" if padding_mode == "circular" else "reflect"
    padded = np.pad(rec.x(), ((0, 0), (0, 0), (1, 1), (1, 1)), mode=np_mode)
    patches = conv_patches(padded, (3, 3), (1, 1), (0, 0), (1, 1))
    a, _, _, _ = conv_factors(patches, rec.delta(), 32)
    np.testing.assert_allclose(opt.factors[""].a.numpy(), a, rtol=1e-5, atol=1e-6)


def test_conv2d_same_padding_with_dilation() -> None:
    torch.manual_seed(3)
    conv = nn.Conv2d(1, 2, 3, padding="same", dilation=2)
    rec = Recorder(conv)
    opt = thor(conv, 0.1, 0.01, 0.9, frequency=2)
    _one_step(conv, conv(torch.randn(2, 1, 6, 6)).pow(2).sum(), opt)

    patches = conv_patches(rec.x(), (3, 3), (1, 1), (2, 2), (2, 2))
    a, g, _, _ = conv_factors(patches, rec.delta(), 32)
    np.testing.assert_allclose(opt.factors[""].a.numpy(), a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(opt.factors[""].g.numpy(), g, rtol=1e-5, atol=1e-6)


def test_embedding_factors_are_token_counts_and_output_gradients() -> None:
    torch.manual_seed(4)
    emb = nn.Embedding(7, 3)
    net = nn.Sequential(emb, nn.Flatten(), nn.Linear(12, 2))
    rec = Recorder(emb)
    opt = thor(net, 0.1, 0.01, 0.9, batch_size=6, frequency=2)
    ids = torch.tensor([[0, 1, 1, 6], [6, 6, 2, 0]])
    _one_step(net, net(ids).pow(2).mean(), opt)

    factors = opt.factors["0"]
    np.testing.assert_array_equal(factors.a.numpy(), np.bincount(ids.reshape(-1), minlength=7))
    delta = rec.delta().reshape(-1, 3)
    expected_g = delta.T @ delta / 8 * 6**2
    np.testing.assert_allclose(factors.g.numpy(), expected_g, rtol=1e-5, atol=1e-9)


def test_factors_are_float32_under_autocast() -> None:
    torch.manual_seed(5)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    rec = Recorder(net[2])
    opt = thor(net, 0.1, 0.01, 0.9, frequency=2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = net(torch.randn(6, 4))
    assert out.dtype == torch.bfloat16
    _one_step(net, out.float().pow(2).mean(), opt)

    assert rec.outputs[-1].grad is not None and rec.outputs[-1].grad.dtype == torch.bfloat16
    a, g = linear_factors(rec.x(), rec.delta(), batch_size=32)
    factors = opt.factors["2"]
    assert factors.a.dtype == torch.float32 and factors.g.dtype == torch.float32
    np.testing.assert_allclose(factors.a.numpy(), a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(factors.g.numpy(), g, rtol=1e-5, atol=1e-6)


def test_two_forwards_before_one_step_accumulate() -> None:
    torch.manual_seed(6)
    lin = nn.Linear(3, 2)
    rec = Recorder(lin)
    opt = thor(lin, 0.1, 0.01, 0.9, batch_size=4, frequency=2)
    lin(torch.randn(4, 3)).pow(2).mean().backward()
    lin(torch.randn(4, 3)).pow(2).mean().backward()
    opt.step()

    x = np.concatenate([r.double().numpy() for r in rec.inputs])
    delta = np.concatenate([o.grad.double().numpy() for o in rec.outputs])
    a, g = linear_factors(x, delta, batch_size=4)
    np.testing.assert_allclose(opt.factors[""].a.numpy(), a, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(opt.factors[""].g.numpy(), g, rtol=1e-5, atol=1e-7)


def test_model_o3_keeps_factors_and_inverses_float32() -> None:
    """Under O3 the network itself is bfloat16; statistics and inverses stay float32 and
    the bfloat16 weights are still updated."""
    torch.manual_seed(7)
    net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
    opt = thor(net, 0.05, 0.03, 0.9, frequency=2)
    loss = nn.CrossEntropyLoss()
    model = ConvertModelUtils.convert_to_thor_model(None, net, loss, opt, amp_level="O3")
    before = [p.detach().clone() for p in net.parameters()]
    gen = torch.Generator().manual_seed(8)
    data = [(torch.randn(4, 1, 6, 6, generator=gen), torch.tensor([0, 1, 2, 0]))] * 3
    model.train(1, data)

    assert all(p.dtype == torch.bfloat16 for p in net.parameters())
    assert all(not torch.equal(p, q) for p, q in zip(net.parameters(), before, strict=True))
    for name in ("0", "3"):
        assert opt.factors[name].a.dtype == opt.factors[name].g.dtype == torch.float32
        inverses = opt.inverses(name)
        assert inverses is not None
        assert all(inverse.dtype == torch.float32 for inverse in inverses)
