"""Fused convolution + ReLU copies of a network (``sumlens.landscape.fusion``) against the
network itself: what is rewritten, what is left alone, and equal outputs either way."""

from __future__ import annotations

import pytest
import torch
from helpers.digits import DigitsCNN, digits
from torch import nn

from sumlens.landscape import onednn
from sumlens.landscape.fusion import ConvReLU, fuse_relus

pytestmark = pytest.mark.skipif(
    not torch.backends.mkldnn.is_available(), reason="needs oneDNN (torch's CPU build)"
)

IMAGES = digits(0)[0][:16]


def probe() -> tuple[torch.Tensor, ...]:
    return onednn.to_onednn((IMAGES,))


def rewritten(fused: nn.Module) -> tuple[list[str], list[str]]:
    """(targets of the fused-call modules' convolutions, in-place ReLU calls) in ``fused``."""
    assert isinstance(fused, torch.fx.GraphModule)
    modules = dict(fused.named_modules())
    convs = [
        next(n for n, m in modules.items() if m is modules[str(node.target)].conv)
        for node in fused.graph.nodes
        if node.op == "call_module" and isinstance(modules[str(node.target)], ConvReLU)
    ]
    in_place = [
        str(node.args[0].target)
        for node in fused.graph.nodes
        if node.op == "call_function" and node.target is torch.relu_
    ]
    return convs, in_place


def assert_same_outputs(fused: nn.Module, network: nn.Module) -> None:
    with torch.inference_mode():
        for inputs in (probe(), (IMAGES,)):
            torch.testing.assert_close(
                onednn.dense(fused(*inputs)), onednn.dense(network(*inputs)), rtol=1e-5, atol=1e-6
            )


def test_conv_relu_pairs_are_fused_and_kept_layers_get_an_in_place_relu() -> None:
    network = DigitsCNN().eval()
    fused = fuse_relus(network, probe(), keep={"conv1"})
    assert fused is not None
    assert rewritten(fused) == (["conv2"], ["conv1"])
    assert_same_outputs(fused, network)
    fused_all = fuse_relus(network, probe(), keep=set())
    assert fused_all is not None
    assert rewritten(fused_all) == (["conv1", "conv2"], [])
    assert_same_outputs(fused_all, network)


def test_the_fused_copy_runs_with_the_networks_current_weights() -> None:
    network = DigitsCNN().eval()
    fused = fuse_relus(network, probe(), keep=set())
    assert fused is not None
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.mul_(-0.5).add_(0.01)
    assert_same_outputs(fused, network)


class Functional(nn.Module):
    """ReLUs written as functions and as a tensor method; a Linear layer before one."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(1, 4, 3, padding=1)
        self.b = nn.Conv2d(4, 4, 3, padding=(1, 1), stride=2)
        self.c = nn.Conv2d(4, 4, 1)
        self.fc = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.a(x))
        x = nn.functional.relu(self.b(x))
        x = self.c(x).relu()
        return nn.functional.relu(self.fc(x.flatten(1)))


def test_relu_functions_and_methods_are_fused_too() -> None:
    network = Functional().eval()
    fused = fuse_relus(network, probe(), keep=set())
    assert fused is not None
    assert rewritten(fused) == (["a", "b", "c"], ["fc"])
    assert_same_outputs(fused, network)


class Residual(nn.Module):
    """A convolution whose output is also added to later, an in-place ReLU, and
    convolutions whose padding the fused operator does not take."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.again = nn.Conv2d(4, 4, 3, padding=1)
        self.inplace = nn.ReLU(inplace=True)
        self.same = nn.Conv2d(4, 4, 3, padding="same")
        self.circular = nn.Conv2d(4, 4, 3, padding=1, padding_mode="circular")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        z = self.inplace(self.again(torch.relu(y) + y))
        return torch.relu(self.circular(torch.relu(self.same(z))))


def test_shared_outputs_inplace_relus_and_other_paddings_are_not_fused() -> None:
    network = Residual().eval()
    fused = fuse_relus(network, (IMAGES,), keep=set())
    assert fused is not None
    # the two convolutions with other paddings are followed by a ReLU in place instead
    assert rewritten(fused) == ([], ["same", "circular"])
    with torch.inference_mode():
        torch.testing.assert_close(fused(IMAGES), network(IMAGES))


def test_hooks_keep_their_modules_unfused() -> None:
    network = DigitsCNN().eval()
    seen: list[torch.Tensor] = []  # a hook may keep the output: no ReLU may overwrite it
    network.relu2.register_forward_hook(lambda _m, _i, out: seen.append(out))
    network.conv1.register_forward_hook(lambda _m, _i, out: seen.append(out))
    assert fuse_relus(network, probe(), keep=set()) is None  # nothing left to fuse
    handle = nn.modules.module.register_module_forward_hook(lambda *args: None)
    try:
        assert fuse_relus(DigitsCNN().eval(), probe(), keep=set()) is None
    finally:
        handle.remove()


class Branching(nn.Module):
    """Control flow on a value: symbolic tracing cannot follow it."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x))
        return y if float(y.to_dense().sum() if y.is_mkldnn else y.sum()) > 0 else -y


def test_a_network_that_cannot_be_traced_is_not_fused(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("INFO", logger="sumlens"):
        assert fuse_relus(Branching().eval(), probe(), keep=set()) is None
    assert "ReLUs not fused" in caplog.text
