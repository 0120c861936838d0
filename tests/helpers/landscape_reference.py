"""The landscape evaluator's definition, point by point, and what it is checked on.

:func:`reference` loads every point's weights into the network and averages its batch
losses, plainly; the evaluator's strategies (loop, vmap, the fast paths) must give the
same heights on :func:`random_plane` at :data:`COORDS` over :func:`data`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from helpers.digits import batches, digits
from sumlens.landscape.plane import Plane

COORDS = np.array([[0.0, 0.0], [0.5, -0.25], [-1.0, 0.75], [0.2, 0.9], [1.0, 1.0], [-0.3, -0.6]])
"""Points of the plane where the heights are compared (the centre, inside, on the edge)."""


def data(samples: int = 250, batch: int = 32) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The first ``samples`` digits in batches of ``batch`` (the last one may be shorter)."""
    x, y = digits(0)
    return batches(x[:samples], y[:samples], batch)


def random_plane(network: nn.Module, seed: int = 0) -> Plane:
    """A plane through ``network``'s weights along two random directions (and batch-norm
    statistics of its own, so that they must come from the plane's base)."""
    torch.manual_seed(seed)
    state = {k: v.detach().numpy().copy() for k, v in network.state_dict().items()}
    if "bn.running_mean" in state:
        state["bn.running_mean"] = np.linspace(-0.2, 0.2, 4).astype(np.float32)
        state["bn.running_var"] = np.linspace(0.5, 2.0, 4).astype(np.float32)
    rng = np.random.default_rng(seed)
    moving = [k for k, v in state.items() if "weight" in k or "bias" in k]
    v = {k: 0.3 * rng.standard_normal(state[k].shape) for k in moving}
    w = {k: 0.3 * rng.standard_normal(state[k].shape) for k in moving}
    return Plane.create(state, v, w)


def reference(
    network: nn.Module,
    elements: list[tuple[Any, ...]],
    loss_fn: Any,
    plane: Plane,
    coords: np.ndarray,
) -> np.ndarray:
    """The definition, point by point: load every entry, eval mode, mean of batch losses."""
    heights = []
    for a, b in coords:
        state = {}
        for name, base in plane.base.items():
            value = torch.from_numpy(np.array(base))
            if name in plane.v:
                a32, b32 = torch.tensor([a, b], dtype=torch.float32)
                value = value + a32 * torch.from_numpy(plane.v[name])
                value = value + b32 * torch.from_numpy(plane.w[name])
            state[name] = value
        network.load_state_dict(state)
        network.eval()
        with torch.no_grad():
            if loss_fn is None:
                losses = [float(network(*e)[0]) for e in elements]
            else:
                losses = [float(loss_fn(network(*e[:-1]), e[-1])) for e in elements]
        heights.append(np.mean(losses))
    return np.array(heights)
