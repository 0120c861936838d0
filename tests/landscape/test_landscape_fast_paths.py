"""The evaluator's shortcuts against their definitions: batch losses from one loss call,
the first layer from three precomputed outputs, passes on oneDNN tensors."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest
import torch
from helpers.digits import DigitsCNN, digits
from helpers.landscape_reference import COORDS, data, random_plane, reference
from torch import nn

from sumlens.landscape.batch_loss import BatchLosses
from sumlens.landscape.evaluate import EvalOptions, Evaluator
from sumlens.landscape.objective import Objective
from sumlens.landscape.stem import find_stem

GEN = torch.Generator().manual_seed(0)
LOGITS = torch.randn(96, 10, generator=GEN) * 3
CLASSES = torch.randint(0, 10, (96,), generator=GEN)
VALUES = torch.randn(96, 3, generator=GEN)
BITS = torch.randint(0, 2, (96, 4), generator=GEN).float()


@pytest.mark.parametrize(
    ("loss_fn", "outputs", "labels"),
    [
        (nn.CrossEntropyLoss(), LOGITS, CLASSES),
        (nn.CrossEntropyLoss(label_smoothing=0.1), LOGITS, CLASSES),
        (nn.CrossEntropyLoss(), LOGITS, torch.softmax(LOGITS.flip(0), 1)),  # probabilities
        (nn.NLLLoss(), torch.log_softmax(LOGITS, 1), CLASSES),
        (nn.MSELoss(), VALUES, VALUES.flip(0)),
        (nn.L1Loss(), VALUES, VALUES.flip(0)),
        (nn.SmoothL1Loss(beta=0.5), VALUES, VALUES.flip(0)),
        (nn.HuberLoss(delta=0.7), VALUES, VALUES.flip(0)),
        (nn.BCELoss(), torch.sigmoid(VALUES[:, :2].repeat(1, 2)), BITS),
        (nn.BCEWithLogitsLoss(pos_weight=torch.full((4,), 2.0)), VALUES[:, :2].repeat(1, 2), BITS),
        (nn.SoftMarginLoss(), VALUES, VALUES.flip(0).sign()),
        (nn.MultiLabelSoftMarginLoss(), VALUES[:, :2].repeat(1, 2), BITS),
    ],
)
def test_one_call_gives_every_batch_loss(loss_fn: nn.Module, outputs: Any, labels: Any) -> None:
    batch_losses = BatchLosses.of(loss_fn)
    assert batch_losses is not None
    assert batch_losses.accepts(labels)
    together = batch_losses(outputs, labels, 3)
    one_by_one = torch.stack(
        [loss_fn(outputs[i : i + 32], labels[i : i + 32]) for i in (0, 32, 64)]
    )
    torch.testing.assert_close(together, one_by_one, rtol=1e-6, atol=0)


class HalvedLoss(nn.CrossEntropyLoss):
    """A subclass may change what the mean means: it keeps its calls."""

    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return super().forward(input, target) / 2


def test_weighted_means_keep_one_call_per_batch() -> None:
    assert BatchLosses.of(nn.CrossEntropyLoss(weight=torch.ones(10))) is None
    assert BatchLosses.of(nn.MSELoss(reduction="sum")) is None
    assert BatchLosses.of(HalvedLoss()) is None
    hooked = nn.CrossEntropyLoss()
    hooked.register_forward_hook(lambda *args: None)
    assert BatchLosses.of(hooked) is None
    assert BatchLosses.of(nn.functional.cross_entropy) is None
    ignoring = BatchLosses.of(nn.CrossEntropyLoss())
    assert ignoring is not None
    assert not ignoring.accepts(torch.tensor([1, -100, 3]))  # the mean skips that sample
    assert ignoring.accepts(torch.tensor([1, 2, 3]))


def test_ignored_targets_are_left_out_of_the_mean() -> None:
    elements = [(x, y.clone()) for x, y in data(128)]
    for _, labels in elements[1:3]:
        labels[::5] = -100
    loss_fn = nn.CrossEntropyLoss()
    plane = random_plane(DigitsCNN())
    evaluator = Evaluator(Objective(DigitsCNN(), elements, loss_fn), EvalOptions(points_per_pass=1))
    evaluator.set_plane(plane, "plane")
    expected = reference(DigitsCNN(), elements, loss_fn, plane, COORDS)
    np.testing.assert_allclose(evaluator.losses(COORDS), expected, rtol=2e-6)


class Scaled(nn.Module):
    """Scales its input first: no layer reads the input itself."""

    def __init__(self) -> None:
        super().__init__()
        self.net = DigitsCNN()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x * 2)


class SharedLayer(nn.Module):
    """One convolution applied to the input and again to its own output."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 1, 3, padding=1)
        self.fc = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.conv(torch.relu(self.conv(x))).flatten(1))


def test_the_first_layer_reading_the_input_is_found() -> None:
    x = digits(0)[0][:4]
    assert find_stem(DigitsCNN(), (x,)) == ("conv1", 0)
    mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 10))
    assert find_stem(mlp, (x,)) is None  # the linear layer reads a flattened copy
    assert find_stem(nn.Sequential(nn.Linear(8, 3)), (x,)) == ("0", 0)
    assert find_stem(Scaled(), (x,)) is None
    hooked = DigitsCNN()
    hooked.conv1.register_forward_hook(lambda *args: None)
    assert find_stem(hooked, (x,)) is None


@pytest.mark.parametrize("model", [DigitsCNN, SharedLayer])
@pytest.mark.parametrize("onednn", [False, True])
def test_precomputed_first_layer_outputs_give_the_same_heights(
    model: type[nn.Module], onednn: bool
) -> None:
    elements = data()
    loss_fn = nn.CrossEntropyLoss()
    plane = random_plane(model())
    network = model()
    evaluator = Evaluator(
        Objective(network, elements, loss_fn), EvalOptions(points_per_pass=1, onednn=onednn)
    )
    evaluator.set_plane(plane, "plane")
    heights = evaluator.losses(COORDS)
    assert evaluator._stem is not None
    assert evaluator._onednn is onednn
    first = network.conv1 if model is DigitsCNN else network.conv
    assert "forward" not in vars(first)  # the layer is itself again after the evaluation
    expected = reference(model(), elements, loss_fn, plane, COORDS)
    np.testing.assert_allclose(heights, expected, rtol=2e-6)


class MeanPooled(nn.Module):
    """Global average pooling by ``mean``, which oneDNN tensors do not support."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


@pytest.mark.parametrize("onednn", [None, True])
def test_a_network_onednn_cannot_run_is_evaluated_on_plain_tensors(
    onednn: bool | None, caplog: pytest.LogCaptureFixture
) -> None:
    elements = data(96)
    plane = random_plane(MeanPooled())
    evaluator = Evaluator(
        Objective(MeanPooled(), elements, nn.CrossEntropyLoss()),
        EvalOptions(points_per_pass=1, onednn=onednn),
    )
    evaluator.set_plane(plane, "plane")
    with caplog.at_level(logging.INFO, logger="sumlens"):
        heights = evaluator.losses(COORDS)
    assert not evaluator._onednn
    assert "oneDNN tensors do not run this model" in caplog.text
    expected = reference(MeanPooled(), elements, nn.CrossEntropyLoss(), plane, COORDS)
    np.testing.assert_allclose(heights, expected, rtol=2e-6)


def test_a_label_out_of_range_gets_the_losss_own_error() -> None:
    batch_losses = BatchLosses.of(nn.CrossEntropyLoss())
    assert batch_losses is not None
    with pytest.raises(IndexError, match="Target 12 is out of bounds"):
        batch_losses(LOGITS, torch.full((96,), 12), 3)
