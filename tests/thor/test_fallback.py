"""A factor that is not positive definite: one jitter retry, then first order for that
layer (with one warning) until a later refresh succeeds."""

from __future__ import annotations

import logging

import pytest
import torch
from torch import nn

from sumlens.thor import thor
from sumlens.thor.inverse import JITTER, damped_blocks, invert_blocks


def test_jitter_rescues_a_zero_factor_and_a_singular_one_fails() -> None:
    good = torch.tensor([[[2.0, 1.0], [1.0, 2.0]]])
    zero = torch.zeros(1, 3, 3)
    ones = torch.ones(1, 3, 3)  # rank 1: 1 + 1e-8 == 1 in float32, the retry fails too
    results = invert_blocks([good, zero, ones, damped_blocks(torch.ones(3, 3), 0.0, 2)])
    torch.testing.assert_close(results[0], torch.linalg.inv(good))
    torch.testing.assert_close(results[1], torch.eye(3).unsqueeze(0) / JITTER)
    assert results[2] is None
    assert results[3] is None  # the first 2x2 block of the split is singular


def test_non_positive_definite_layer_is_first_order_then_recovers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    torch.manual_seed(0)
    net = nn.Linear(3, 2, bias=False)
    opt = thor(net, 0.1, 0.0, 0.9, frequency=2)  # no damping: A = ones(3, 3) is singular
    start = net.weight.detach().clone()
    rows = torch.ones(4, 3)
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        for _ in range(4):  # two refreshes, both fail
            net(rows).pow(2).sum().backward()
            opt.step()
            opt.zero_grad()
    assert opt.inverses("") is None
    warnings = [r for r in caplog.records if "not positive definite" in r.message]
    assert len(warnings) == 1 and "layer ''" in warnings[0].message

    reference = start.clone().requires_grad_(True)
    buffer = torch.zeros_like(reference)
    for _ in range(4):  # plain momentum SGD from the same start
        grad = torch.autograd.grad((rows @ reference.t()).pow(2).sum(), reference)[0]
        buffer = 0.9 * buffer + grad
        reference = (reference - 0.1 * buffer).detach().requires_grad_(True)
    torch.testing.assert_close(net.weight, reference)

    net(torch.randn(8, 3)).pow(2).sum().backward()  # full-rank inputs: t=4 refreshes
    opt.step()
    assert opt.inverses("") is not None
