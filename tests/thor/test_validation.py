"""Argument errors (spec §7 and its table): raised when ``thor`` is called, naming the
argument, the value and what is allowed."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from sumlens.thor import ConvertNetUtils, Thor, thor

GOOD: dict[str, Any] = {"learning_rate": 0.1, "damping": 0.03, "momentum": 0.9}


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"momentum": 0}, TypeError, "'momentum' must be a float, but got int 0"),
        ({"momentum": "0.9"}, TypeError, "'momentum' must be a float, but got str '0.9'"),
        ({"momentum": -0.5}, ValueError, "'momentum' must be finite and >= 0.0, but got -0.5"),
        ({"frequency": 4.0}, TypeError, "'frequency' must be an int, but got float 4.0"),
        ({"frequency": True}, TypeError, "'frequency' must be an int, but got bool True"),
        ({"frequency": 1}, ValueError, "'frequency' must be >= 2, but got 1"),
        ({"loss_scale": 0.0}, ValueError, "'loss_scale' must be finite and > 0, but got 0.0"),
        ({"loss_scale": -2}, ValueError, "'loss_scale' must be finite and > 0, but got -2"),
        ({"loss_scale": "128"}, TypeError, "'loss_scale' must be a number > 0, a Loss"),
        ({"weight_decay": -1e-4}, ValueError, "'weight_decay' must be finite and >= 0"),
        ({"weight_decay": None}, TypeError, "'weight_decay' must be a number, but got NoneType"),
        ({"use_nesterov": 1}, TypeError, "'use_nesterov' must be a bool, but got int 1"),
        ({"enable_clip_grad": "yes"}, TypeError, "'enable_clip_grad' must be a bool"),
        ({"batch_size": 0}, ValueError, "'batch_size' must be >= 1, but got 0"),
        ({"batch_size": 32.0}, TypeError, "'batch_size' must be an int, but got float 32.0"),
        ({"decay_filter": "bias"}, TypeError, "'decay_filter' must be callable or None"),
        ({"learning_rate": "0.1"}, TypeError, "'learning_rate' must be a number"),
        ({"damping": [0.1, -1.0]}, ValueError, "'damping' must be finite and >= 0"),
        ({"split_indices": 1}, TypeError, "'split_indices' must be None or a list of ints"),
        ({"split_indices": [0.5]}, TypeError, "'split_indices' must contain only ints"),
        ({"split_indices": [1, 0]}, ValueError, r"strictly increasing list of layer indices"),
        ({"split_indices": [2]}, ValueError, r"in \[0, 1\] \(2 second-order layers\), but got"),
        ({"block_size": 0}, ValueError, "'block_size' must be >= 1, but got 0"),
        ({"conv_stats": "mean"}, ValueError, "'conv_stats' must be one of"),
        ({"trace_threshold": -1.0}, ValueError, "'trace_threshold' must be finite and >= 0"),
    ],
)
def test_invalid_arguments(changes: dict[str, Any], error: type[Exception], match: str) -> None:
    net = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    arguments = {**GOOD, **changes}
    with pytest.raises(error, match=match) as raised:
        thor(net, **arguments)
    assert str(raised.value).startswith("For 'thor', the argument")


def test_net_must_be_a_module() -> None:
    with pytest.raises(TypeError, match=r"'net' must be a torch\.nn\.Module, but got list"):
        thor([nn.Parameter(torch.zeros(1))], **GOOD)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"'net' must be a torch\.nn\.Module, but got str"):
        ConvertNetUtils().convert_to_thor_net("net")  # type: ignore[arg-type]


def test_valid_extremes_are_accepted() -> None:
    net = nn.Linear(2, 1)
    opt = thor(net, 0.0, [0.0, 0.1], 0.0, 0, 1, 1, False, None, [0], True, 2, block_size=None)
    assert isinstance(opt, Thor)


def test_load_state_dict_rejects_a_foreign_state() -> None:
    net = nn.Linear(2, 1)
    opt = thor(net, **GOOD)
    foreign = torch.optim.SGD(net.parameters(), lr=0.1).state_dict()
    with pytest.raises(ValueError, match="has no 'thor' entry"):
        opt.load_state_dict(foreign)
    other = thor(nn.Sequential(nn.Linear(2, 1)), **GOOD).state_dict()
    with pytest.raises(ValueError, match=r"saved second-order layers \['0'\] do not match"):
        opt.load_state_dict(other)
