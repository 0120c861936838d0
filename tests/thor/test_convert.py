"""ConvertNetUtils (hooks only, outputs unchanged, idempotent, first-order fallbacks) and
ConvertModelUtils (the Model it returns, the loss-scale hand-over)."""

from __future__ import annotations

import logging

import pytest
import torch
from helpers.digits import DigitsCNN, batches, digits
from torch import nn

from sumlens.thor import ConvertModelUtils, ConvertNetUtils, thor
from sumlens.thor.convert_net import converted_layers
from sumlens.train import (
    DynamicLossScaleManager,
    FixedLossScaleManager,
    LossScaleManager,
    Model,
)


class InplaceNet(nn.Module):
    """Every supported layer kind, with in-place ops right after the hooked layers."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.norm = nn.LayerNorm(4)
        self.conv = nn.Conv2d(1, 3, 3, padding=2, dilation=2)
        self.grouped = nn.Conv2d(3, 3, 1, groups=3)
        self.fc = nn.Linear(3 * 16 + 4, 5)

    def forward(self, image: torch.Tensor, token: torch.Tensor) -> torch.Tensor:
        h = torch.relu_(self.conv(image))
        h = self.grouped(h).flatten(1)
        e = self.norm(self.emb(token))
        out = self.fc(torch.cat([h, e], dim=1))
        return out.mul_(2.0)


def _inputs() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randn(3, 1, 4, 4, generator=gen), torch.tensor([1, 7, 7])


def test_conversion_leaves_outputs_gradients_and_modules_unchanged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    torch.manual_seed(0)
    net = InplaceNet()
    image, token = _inputs()
    before = net(image, token)
    before.sum().backward()
    grads_before = [p.grad.clone() for p in net.parameters()]  # type: ignore[union-attr]
    net.zero_grad()
    types = [type(m) for m in net.modules()]
    names = list(net.state_dict())

    with caplog.at_level(logging.WARNING, logger="sumlens"):
        thor(net, 0.1, 0.03, 0.9, frequency=2)  # converts and arms the hooks (step 0)
    after = net(image, token)
    after.sum().backward()

    torch.testing.assert_close(after, before, rtol=0, atol=0)
    for p, g in zip(net.parameters(), grads_before, strict=True):
        torch.testing.assert_close(p.grad, g, rtol=0, atol=0)
    assert [type(m) for m in net.modules()] == types
    assert list(net.state_dict()) == names
    kinds = {name: tap.kind for name, _, tap in converted_layers(net)}
    assert kinds == {
        "emb": "embedding",
        "norm": "layernorm",
        "conv": "conv2d",
        "grouped": "first_order",
        "fc": "linear",
    }
    assert [r.message for r in caplog.records if "groups=3" in r.message] != []


def test_conversion_is_idempotent(caplog: pytest.LogCaptureFixture) -> None:
    net = InplaceNet()
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        ConvertNetUtils().convert_to_thor_net(net)
        taps = {name: tap for name, _, tap in converted_layers(net)}
        hooks = {name: len(m._forward_hooks) for name, m in net.named_modules()}
        assert ConvertNetUtils().convert_to_thor_net(net) is net
        thor(net, 0.1, 0.03, 0.9)
    assert {name: tap for name, _, tap in converted_layers(net)} == taps
    assert {name: len(m._forward_hooks) for name, m in net.named_modules()} == hooks
    assert len([r for r in caplog.records if "groups=3" in r.message]) == 1


def test_grouped_conv_and_frozen_layers_are_first_order() -> None:
    torch.manual_seed(1)
    net = nn.Sequential(nn.Conv2d(2, 2, 3, groups=2), nn.Flatten(), nn.Linear(8, 2))
    net[2].weight.requires_grad_(False)
    reference = [p.detach().clone() for p in net.parameters()]
    opt = thor(net, 0.1, 0.03, 0.9, frequency=2)
    assert [name for name, _, tap in converted_layers(net) if tap.kind != "first_order"] == []
    sgd_net = nn.Sequential(nn.Conv2d(2, 2, 3, groups=2), nn.Flatten(), nn.Linear(8, 2))
    with torch.no_grad():
        for p, r in zip(sgd_net.parameters(), reference, strict=True):
            p.copy_(r)
    sgd_net[2].weight.requires_grad_(False)
    sgd = torch.optim.SGD([p for p in sgd_net.parameters() if p.requires_grad], 0.1, 0.9)
    x = torch.randn(4, 2, 4, 4)
    for model, optimizer in ((net, opt), (sgd_net, sgd)):
        for _ in range(2):
            model(x).pow(2).sum().backward()
            optimizer.step()
            optimizer.zero_grad()
    for p, q in zip(net.parameters(), sgd_net.parameters(), strict=True):
        torch.testing.assert_close(p, q)


def test_convert_to_thor_model_returns_the_model_for_other_optimizers() -> None:
    net = DigitsCNN()
    sgd = torch.optim.SGD(net.parameters(), lr=0.1)
    model = Model(net, nn.CrossEntropyLoss(), sgd)
    assert ConvertModelUtils.convert_to_thor_model(model, net, optimizer=sgd) is model


def test_convert_to_thor_model_unwraps_a_train_network() -> None:
    net = DigitsCNN()
    opt = thor(net, 0.01, 0.03, 0.9)
    model = Model(net, nn.CrossEntropyLoss(), opt, metrics={"acc"})
    thor_model = ConvertModelUtils.convert_to_thor_model(
        model, model.train_network, metrics={"acc"}
    )
    assert thor_model is not model and isinstance(thor_model, Model)
    assert thor_model.predict_network is net
    x, y = digits(0)
    thor_model.train(1, batches(x[:64], y[:64], 16))
    assert opt.step_count == 4
    assert set(thor_model.eval(batches(x[64:128], y[64:128], 32))) == {"acc"}


def _train(
    manager: LossScaleManager | None, loss_scale: float, steps: int = 5
) -> list[torch.Tensor]:
    torch.manual_seed(3)
    net = DigitsCNN()
    opt = thor(net, 0.02, 0.03, 0.9, loss_scale=loss_scale, frequency=2)
    loss = nn.CrossEntropyLoss()
    model = Model(net, loss, opt, loss_scale_manager=manager)
    model = ConvertModelUtils.convert_to_thor_model(
        model, net, loss, opt, loss_scale_manager=manager
    )
    x, y = digits(1)
    model.train(1, batches(x[: steps * 16], y[: steps * 16], 16))
    return [p.detach().clone() for p in net.parameters()]


@pytest.mark.parametrize(
    "manager",
    [
        FixedLossScaleManager(128.0, drop_overflow_update=False),
        DynamicLossScaleManager(2.0**10),
    ],
    ids=["fixed", "dynamic"],
)
def test_loss_scale_manager_is_handed_over(manager: LossScaleManager) -> None:
    """Model unscales the gradients; THOR divides only G by S², not the gradients again."""
    plain = _train(None, 1.0)
    scaled = _train(manager, 128.0)
    for p, q in zip(plain, scaled, strict=True):
        torch.testing.assert_close(q, p, rtol=1e-4, atol=1e-5)


def test_grad_scaler_as_loss_scale() -> None:
    """A torch GradScaler unscales in ``scaler.step``; THOR reads its scale for G."""
    results = []
    for use_scaler in (False, True):
        torch.manual_seed(4)
        net = DigitsCNN()
        scaler = torch.amp.GradScaler("cpu", init_scale=256.0)
        opt = thor(net, 0.02, 0.03, 0.9, loss_scale=scaler if use_scaler else 1.0, frequency=2)
        x, y = digits(2)
        for bx, by in batches(x[:48], y[:48], 16):
            loss = nn.functional.cross_entropy(net(bx), by)
            if use_scaler:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            opt.zero_grad()
        results.append([p.detach().clone() for p in net.parameters()])
    for p, q in zip(*results, strict=True):
        torch.testing.assert_close(q, p, rtol=1e-4, atol=1e-5)
