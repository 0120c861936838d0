"""The evaluator against the plain definition: load ``base + a*v + b*w``, mean of batch losses."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest
import torch
from helpers.digits import DigitsCNN, digits
from helpers.landscape import mindspore_style
from helpers.landscape_reference import COORDS, data, random_plane, reference
from torch import nn

import sumlens
from sumlens.landscape.evaluate import EvalOptions, Evaluator
from sumlens.landscape.objective import Objective, objective_from
from sumlens.metrics import Loss


class Normed(nn.Module):
    """Conv, batch norm (buffers that must come from the snapshot), dropout, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(4 * 64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.drop(torch.relu(self.bn(self.conv(x)))).flatten(1))


class TwoInputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(64, 10)
        self.b = nn.Linear(64, 10)

    def forward(self, left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        return self.a(left.flatten(1)) + self.b(right.flatten(1))


class Branchy(nn.Module):
    """Data-dependent control flow: vmap cannot run it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.fc(x.flatten(1))
        return out if out.sum() > 0 else -out


class WithLoss(nn.Module):
    """Computes its own loss from the whole batch (Model without loss_fn)."""

    def __init__(self) -> None:
        super().__init__()
        self.net = DigitsCNN()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.net(x)
        return nn.functional.cross_entropy(logits, y), logits


@pytest.mark.parametrize(
    ("options", "strategy"),
    [
        (EvalOptions(points_per_pass=1), "loop"),
        (EvalOptions(points_per_pass=4), "vmap"),
        (EvalOptions(points_per_pass=1, samples_per_pass=7), "loop"),  # batches split
        (EvalOptions(points_per_pass=3, samples_per_pass=100), "vmap"),  # batches grouped
        (EvalOptions(points_per_pass=1, memory_budget=1), "loop"),  # one sample per pass
        (EvalOptions(), None),  # timed choice
    ],
)
@pytest.mark.parametrize("model", [DigitsCNN, Normed])
def test_heights_equal_the_definition(
    options: EvalOptions, strategy: str | None, model: type[nn.Module]
) -> None:
    elements = data()  # 250 samples: the last batch is shorter
    loss_fn = nn.CrossEntropyLoss()
    plane = random_plane(model())
    evaluator = Evaluator(Objective(model(), elements, loss_fn), options)
    evaluator.set_plane(plane, "plane")
    heights = evaluator.losses(COORDS)
    assert strategy is None or evaluator.strategy == strategy
    expected = reference(model(), elements, loss_fn, plane, COORDS)
    np.testing.assert_allclose(heights, expected, rtol=2e-6)


def test_several_inputs_and_a_network_computed_loss() -> None:
    x, y = digits(0)
    elements = [(x[i : i + 20], x[i + 1 : i + 21], y[i : i + 20]) for i in range(0, 100, 20)]
    plane = random_plane(TwoInputs())
    for points in (1, 3):
        evaluator = Evaluator(
            Objective(TwoInputs(), elements, nn.CrossEntropyLoss()),
            EvalOptions(points_per_pass=points, samples_per_pass=30),
        )
        evaluator.set_plane(plane, "plane")
        expected = reference(TwoInputs(), elements, nn.CrossEntropyLoss(), plane, COORDS)
        np.testing.assert_allclose(evaluator.losses(COORDS), expected, rtol=2e-6)

    elements = data(96)
    plane = random_plane(WithLoss())
    evaluator = Evaluator(Objective(WithLoss(), elements, None), EvalOptions(points_per_pass=2))
    evaluator.set_plane(plane, "plane")
    expected = reference(WithLoss(), elements, None, plane, COORDS)
    np.testing.assert_allclose(evaluator.losses(COORDS), expected, rtol=2e-6)


def test_a_model_vmap_cannot_run_is_evaluated_point_by_point(
    caplog: pytest.LogCaptureFixture,
) -> None:
    elements = data(64)
    plane = random_plane(Branchy())
    evaluator = Evaluator(Objective(Branchy(), elements, nn.CrossEntropyLoss()))
    evaluator.set_plane(plane, "plane")
    with caplog.at_level(logging.INFO, logger="sumlens"):
        heights = evaluator.losses(COORDS)
    assert evaluator.strategy == "loop"
    assert "vmap cannot run this model" in caplog.text
    expected = reference(Branchy(), elements, nn.CrossEntropyLoss(), plane, COORDS)
    np.testing.assert_allclose(heights, expected, rtol=2e-6)


def test_train_mode_is_reproducible_point_by_point() -> None:
    elements = data(128)
    plane = random_plane(Normed())
    options = EvalOptions(train_mode=True, seed=5)
    together = Evaluator(Objective(Normed(), elements, nn.CrossEntropyLoss()), options)
    together.set_plane(plane, "plane")
    all_at_once = together.losses(COORDS)
    alone = Evaluator(Objective(Normed(), elements, nn.CrossEntropyLoss()), options)
    alone.set_plane(plane, "plane")
    # any order, any grouping: a point's dropout is seeded by its index, and the batch-norm
    # statistics are restored before every point
    for index in reversed(range(len(COORDS))):
        single = alone.losses(COORDS[index : index + 1], first_index=index)
        assert single[0] == all_at_once[index]
    eval_mode = Evaluator(Objective(Normed(), elements, nn.CrossEntropyLoss()))
    eval_mode.set_plane(plane, "plane")
    assert not np.allclose(eval_mode.losses(COORDS), all_at_once)  # dropout and batch stats


def test_callback_results_become_objectives() -> None:
    model, network, elements, _ = mindspore_style()
    objective = objective_from((model, network, elements, {"Loss": Loss()}), 100)
    assert objective.network is network
    assert len(objective.batches) == 100 // 32  # only whole batches within num_samples
    assert isinstance(objective.loss_fn, nn.CrossEntropyLoss)
    assert (
        objective_from(mindspore_style(), None).fingerprint()
        == objective_from((DigitsCNN(), data(256), nn.CrossEntropyLoss()), None).fingerprint()
    )


@pytest.mark.parametrize(
    ("result", "error", "match"),
    [
        (lambda: "network", TypeError, "must return"),
        (lambda: (DigitsCNN(), data(64)), TypeError, "must return"),
        (lambda: (*mindspore_style()[:3], {"loss": Loss()}), ValueError, "'Loss'"),
        (lambda: (DigitsCNN(), *mindspore_style()[1:]), TypeError, "sumlens.Model"),
        (
            lambda: (sumlens.Model(DigitsCNN(), nn.CrossEntropyLoss()), *mindspore_style()[1:]),
            ValueError,
            "different objects",
        ),
        (lambda: ("net", data(64), nn.CrossEntropyLoss()), TypeError, "nn.Module"),
        (lambda: (DigitsCNN(), data(64), "ce"), TypeError, "callable"),
        (lambda: (DigitsCNN(), data(64), nn.CrossEntropyLoss()), ValueError, "batch size 32"),
        (lambda: (DigitsCNN(), [], nn.CrossEntropyLoss()), ValueError, "no batch"),
        (lambda: (DigitsCNN(), [(["a"], [1])], nn.CrossEntropyLoss()), TypeError, "tensors"),
    ],
)
def test_bad_callback_results(result: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        objective_from(result(), 16)


def test_a_snapshot_of_another_network_is_refused() -> None:
    evaluator = Evaluator(Objective(DigitsCNN(), data(64), nn.CrossEntropyLoss()))
    with pytest.raises(ValueError, match="none of the snapshot's entries"):
        evaluator.set_plane(random_plane(TwoInputs()), "other")
    with pytest.raises(RuntimeError, match="set_plane"):
        evaluator.losses(COORDS)


@pytest.mark.parametrize("points", [1, 4])
def test_threads_share_the_points_without_changing_a_value(points: int) -> None:
    elements = data()
    plane = random_plane(DigitsCNN())
    coords = np.vstack([COORDS, COORDS[::-1] * 0.5])
    options = EvalOptions(points_per_pass=points, onednn=True)  # no timed choice between layouts
    alone = Evaluator(Objective(DigitsCNN(), elements, nn.CrossEntropyLoss()), options)
    alone.set_plane(plane, "plane")
    torch.set_num_threads(2)
    try:
        shared = Evaluator(Objective(DigitsCNN(), elements, nn.CrossEntropyLoss()), options)
        shared.set_plane(plane, "plane")
        heights = shared.losses(coords)
        assert torch.get_num_threads() == 2  # restored after the evaluation
    finally:
        torch.set_num_threads(1)
    # every point is computed by one thread either way: the same kernels, the same bits
    np.testing.assert_array_equal(heights, alone.losses(coords))


def item_loss(outputs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """A loss vmap cannot batch (``.item()``): the evaluator calls it batch by batch."""
    scale = 1.0 if labels.max().item() >= 0 else 2.0
    return scale * nn.functional.cross_entropy(outputs, labels)


@pytest.mark.parametrize("loss_fn", [nn.CrossEntropyLoss(), item_loss])
def test_many_small_batches(loss_fn: Any) -> None:
    elements = data(250, batch=4)  # 62 batches of 4 and one of 2: one vmapped loss call a pass
    plane = random_plane(DigitsCNN())
    evaluator = Evaluator(Objective(DigitsCNN(), elements, loss_fn), EvalOptions(points_per_pass=1))
    evaluator.set_plane(plane, "plane")
    expected = reference(DigitsCNN(), elements, loss_fn, plane, COORDS)
    np.testing.assert_allclose(evaluator.losses(COORDS), expected, rtol=2e-6)
