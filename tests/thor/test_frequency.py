"""``frequency``: inverses are recomputed exactly at the steps with ``t % frequency == 0``,
in ``Model.train`` with and without sink mode and in a hand-written loop; the hooks only
collect statistics on those steps."""

from __future__ import annotations

import pytest
import torch
from helpers.digits import DigitsCNN, batches, digits
from torch import nn

from sumlens.thor import ConvertModelUtils, thor
from sumlens.thor.convert_net import converted_layers
from sumlens.thor.factors import Tap
from sumlens.train import Model
from sumlens.train.callback import Callback, RunContext


class InverseSteps(Callback):
    """After every sink/step: the step each layer's inverses were computed at."""

    def __init__(self, opt: torch.optim.Optimizer, names: list[str]) -> None:
        self.opt, self.names = opt, names
        self.seen: list[tuple[int, int, list[int | None]]] = []

    def on_train_step_end(self, run_context: RunContext) -> None:
        params = run_context.original_args()
        layers = self.opt.state_dict()["thor"]["layers"]
        self.seen.append(
            (
                params["cur_step_num"],
                self.opt.factorizations,  # type: ignore[attr-defined]
                [layers[name]["inverse_step"] for name in self.names],
            )
        )


def _taps(net: nn.Module) -> list[Tap]:
    return [tap for _, _, tap in converted_layers(net) if isinstance(tap, Tap)]


def _data(count: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    x, y = digits(0)
    return batches(x[: count * 16], y[: count * 16], 16)


@pytest.mark.parametrize(
    ("sink", "sink_size"), [(False, -1), (True, 4), (True, -1)], ids=["steps", "sink4", "sink-all"]
)
def test_model_train_factorizes_every_frequency_steps(sink: bool, sink_size: int) -> None:
    torch.manual_seed(0)
    net = DigitsCNN()
    opt = thor(net, 0.01, 0.03, 0.9, frequency=3)
    loss = nn.CrossEntropyLoss()
    model = Model(net, loss, opt)
    model = ConvertModelUtils.convert_to_thor_model(model, net, loss, opt)
    record = InverseSteps(opt, ["conv1", "conv2", "fc"])
    data = _data(7)  # 7 steps per epoch, 2 epochs: steps 0..13
    model.train(2, data, callbacks=[record], dataset_sink_mode=sink, sink_size=sink_size)

    steps = 14
    assert opt.step_count == steps
    assert opt.factorizations == len([t for t in range(steps) if t % 3 == 0])
    for done, factorizations, inverse_steps in record.seen:
        last_curvature = (done - 1) // 3 * 3
        assert factorizations == last_curvature // 3 + 1
        assert inverse_steps == [last_curvature] * 3


def test_hooks_collect_only_on_curvature_steps() -> None:
    torch.manual_seed(1)
    net = DigitsCNN()
    opt = thor(net, 0.01, 0.03, 0.9, frequency=4)
    taps = _taps(net)
    loss_fn = nn.CrossEntropyLoss()
    for t, (x, y) in enumerate(_data(9)):
        loss = loss_fn(net(x), y)
        loss.backward()
        assert all(tap.pending for tap in taps) == (t % 4 == 0), t
        assert not any(tap.pending for tap in taps) or t % 4 == 0, t
        opt.step()
        opt.zero_grad()
        assert not any(tap.pending for tap in taps)
    assert opt.factorizations == 3


def test_no_collection_in_eval_mode_or_without_grad() -> None:
    torch.manual_seed(2)
    net = DigitsCNN()
    thor(net, 0.01, 0.03, 0.9, frequency=2)
    taps = _taps(net)
    x = torch.rand(4, 1, 8, 8)
    with torch.no_grad():
        net(x)
    net.eval()
    net(x).sum().backward()
    assert not any(tap.pending for tap in taps)
    net.train()
    net(x).sum().backward()
    assert all(tap.pending for tap in taps)
