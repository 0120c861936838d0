"""Learning-rate and damping schedules: number, per-step sequence/tensor (clamped with one
warning), callable; and that the optimizer reads them at the right step."""

from __future__ import annotations

import logging

import pytest
import torch
from torch import nn

from sumlens.thor import thor
from sumlens.thor.schedule import Schedule


def test_number_is_constant() -> None:
    schedule = Schedule.build(0.5, "lr", "t")
    assert schedule.is_constant
    assert [schedule(t) for t in (0, 7, 10**6)] == [0.5, 0.5, 0.5]


@pytest.mark.parametrize(
    "values",
    [[3.0, 2.0, 1.0], (3, 2, 1), torch.tensor([3.0, 2.0, 1.0])],
    ids=["list", "tuple", "tensor"],
)
def test_sequence_is_indexed_by_step_and_clamped_once(
    values: object, caplog: pytest.LogCaptureFixture
) -> None:
    schedule = Schedule.build(values, "damping", "t")
    assert not schedule.is_constant
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        got = [schedule(t) for t in range(6)]
    assert got == [3.0, 2.0, 1.0, 1.0, 1.0, 1.0]
    warnings = [r for r in caplog.records if "'damping' has 3 per-step values" in r.message]
    assert len(warnings) == 1
    assert "step 3" in warnings[0].message


def test_zero_dim_tensor_is_a_constant() -> None:
    schedule = Schedule.build(torch.tensor(0.25), "lr", "t")
    assert schedule.is_constant and schedule(99) == 0.25


def test_callable_is_called_with_the_step() -> None:
    schedule = Schedule.build(lambda step: 1.0 / (step + 1), "lr", "t")
    assert [schedule(t) for t in range(3)] == [1.0, 0.5, 1.0 / 3]


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        ("0.1", TypeError, "'lr' must be a number, a 1-D sequence"),
        (True, TypeError, "but got bool True"),
        ([0.1, "x"], TypeError, "must contain only numbers"),
        ([], ValueError, "at least one value"),
        (torch.zeros(2, 2), ValueError, r"shape \(2, 2\)"),
        (-0.1, ValueError, r"'lr' must be finite and >= 0 \(each value, .*\), but got -0.1"),
        ([0.1, float("nan")], ValueError, "but got nan"),
    ],
)
def test_invalid_schedules(value: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Schedule.build(value, "lr", "thor")


def test_optimizer_uses_the_step_value_of_both_schedules() -> None:
    torch.manual_seed(0)
    net = nn.Linear(3, 1, bias=False)
    seen: list[int] = []

    def damping(step: int) -> float:
        seen.append(step)
        return 0.1

    opt = thor(net, [0.1, 0.2, 0.3], damping, 0.0, frequency=2)
    lrs = []
    for _ in range(4):
        net(torch.randn(2, 3)).sum().backward()
        opt.step()
        opt.zero_grad()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs == [0.1, 0.2, 0.3, 0.3]
    assert seen == [0, 1, 2, 3]


def test_constant_lr_follows_external_changes_to_the_param_group() -> None:
    torch.manual_seed(1)
    net = nn.Linear(2, 1, bias=False)
    opt = thor(net, 0.1, 0.1, 0.0, frequency=2)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(3):
        net(torch.ones(1, 2)).sum().backward()
        opt.step()
        opt.zero_grad()
        scheduler.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1 * 0.5**3)
