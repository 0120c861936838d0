"""``state_dict``/``load_state_dict``: momentum buffers, the step counter and the stored
inverses survive a save and load, and the resumed run equals the uninterrupted one."""

from __future__ import annotations

import io

import torch
from helpers.digits import DigitsCNN, batches, digits
from torch import nn

from sumlens.thor import Thor, thor
from sumlens.thor.convert_net import converted_layers
from sumlens.thor.factors import Tap

FREQUENCY = 3


def _make(seed: int) -> tuple[nn.Module, Thor]:
    torch.manual_seed(seed)
    net = DigitsCNN()
    opt = thor(net, [0.02, 0.02, 0.01], 0.03, 0.9, weight_decay=1e-4, frequency=FREQUENCY)
    return net, opt


def _train(net: nn.Module, opt: Thor, data: list) -> None:
    for x, y in data:
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        opt.zero_grad()


def test_round_trip_resumes_exactly() -> None:
    x, y = digits(0)
    data = batches(x[:128], y[:128], 16)  # 8 steps
    net, opt = _make(0)
    _train(net, opt, data)
    uninterrupted = [p.detach().clone() for p in net.parameters()]

    net, opt = _make(0)
    _train(net, opt, data[:4])  # the next step, t=4, reuses the inverses of t=3
    buffer = io.BytesIO()
    torch.save({"net": net.state_dict(), "opt": opt.state_dict()}, buffer)
    buffer.seek(0)
    saved = torch.load(buffer)

    state = saved["opt"]
    assert state["thor"]["step"] == 4
    assert state["thor"]["factorizations"] == 2
    assert {name: entry["inverse_step"] for name, entry in state["thor"]["layers"].items()} == {
        "conv1": 3,
        "conv2": 3,
        "fc": 3,
    }
    fc = state["thor"]["layers"]["fc"]
    assert fc["a_inverse"].shape == (2, 128, 128) and fc["g_inverse"].shape == (1, 10, 10)
    assert all("momentum_buffer" in s for s in state["state"].values())
    assert len(state["state"]) == len(list(net.parameters()))

    resumed_net, resumed = _make(1)  # other initial weights: everything must come from the save
    resumed_net.load_state_dict(saved["net"])
    resumed.load_state_dict(saved["opt"])
    assert resumed.step_count == 4 and resumed.factorizations == 2
    taps = [tap for _, _, tap in converted_layers(resumed_net) if isinstance(tap, Tap)]
    assert not any(tap.armed for tap in taps)  # t=4 is not a curvature step
    for name in ("conv1", "conv2", "fc"):
        for got, want in zip(resumed.inverses(name), opt.inverses(name), strict=True):  # type: ignore[arg-type]
            torch.testing.assert_close(got, want, rtol=0, atol=0)
    _train(resumed_net, resumed, data[4:])
    for p, q in zip(resumed_net.parameters(), uninterrupted, strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    assert resumed.factorizations == 3
