"""What a landscape measures: a network, the batches it is scored on, and the loss.

``callback_fn()`` (the argument of ``SummaryLandscape.gen_landscapes_with_multi_process``)
returns either MindSpore's 4-tuple
``(model, network, dataset, metrics)``, with ``model`` a :class:`sumlens.Model` built
from ``network`` and a loss function and ``metrics`` holding ``"Loss"``, or the plain
PyTorch 3-tuple ``(network, dataset, loss_fn)``. Either becomes an :class:`Objective`:
the height of a point is the mean over batches of the batch's loss, which is what
MindSpore's ``Loss`` metric reports. With ``loss_fn`` None the network itself returns
the loss (or a tuple whose first item is the loss) from a whole batch.

Only the first ``num_samples // batch_size`` batches are used; they are materialised
once, on the network's device, and reused for every point.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch

from sumlens.train.amp import network_device
from sumlens.train.dataset import element_converter
from sumlens.train.model import Model

LossFn = Callable[[Any, Any], torch.Tensor]


@dataclasses.dataclass
class Objective:
    """``network`` scored on ``batches`` (dataset elements: inputs..., label) by ``loss_fn``."""

    network: torch.nn.Module
    batches: list[tuple[Any, ...]]
    loss_fn: LossFn | None

    @property
    def device(self) -> torch.device:
        return network_device(self.network)

    def fingerprint(self) -> str:
        """A digest of the samples and the loss mode; part of every cache key."""
        digest = hashlib.sha256(b"loss_fn" if self.loss_fn is not None else b"network-loss")
        for element in self.batches:
            for item in element:
                if isinstance(item, torch.Tensor):
                    data = item.detach().cpu().contiguous()
                    digest.update(f"{data.dtype}{tuple(data.shape)}".encode())
                    digest.update(data.view(torch.uint8).numpy().tobytes())
                else:
                    digest.update(repr(item).encode())
        return digest.hexdigest()


def _first_tensor(element: tuple[Any, ...]) -> torch.Tensor:
    for item in element:
        if isinstance(item, torch.Tensor):
            return item
    raise TypeError(
        "callback_fn's dataset must yield batches of tensors (inputs..., label); "
        f"got a batch of {[type(item).__name__ for item in element]}"
    )


def take_batches(
    dataset: Iterable[Any], num_samples: int | None, device: torch.device
) -> list[tuple[Any, ...]]:
    """The first ``num_samples // batch_size`` batches as elements on ``device`` (all: None)."""
    convert = element_converter("label", None, device)
    batches: list[tuple[Any, ...]] = []
    wanted: int | None = None
    for batch in dataset:
        element = convert(batch)
        if wanted is None and num_samples is not None:
            batch_size = len(_first_tensor(element))
            wanted = num_samples // batch_size
            if wanted == 0:
                raise ValueError(
                    f"num_samples={num_samples} is smaller than the dataset's batch size "
                    f"{batch_size}, so no batch would be scored; use num_samples >= {batch_size}"
                )
        batches.append(element)
        if wanted is not None and len(batches) >= wanted:
            break
    if not batches:
        raise ValueError("callback_fn's dataset yielded no batch")
    return batches


def _model_loss(model: Model, network: torch.nn.Module) -> LossFn | None:
    """The loss function of a ``sumlens.Model`` built on ``network`` (None: network gives it)."""
    if model.predict_network is not network:
        raise ValueError(
            "callback_fn returned a model and a network that are different objects; the "
            "landscape loads weights into `network`, so build the model with it: "
            "Model(network, loss_fn, metrics={'Loss': Loss()})"
        )
    # Model keeps its loss function private; the landscape needs it apart from the
    # network so that many samples (and many points) can share one forward pass.
    loss_fn: LossFn | None = model.loss_fn
    if loss_fn is None and model.eval_network not in (None, network):
        raise ValueError(
            "callback_fn returned a Model without loss_fn and with its own eval_network; "
            "return (network, dataset, loss_fn) instead, or build Model(network, loss_fn)"
        )
    return loss_fn


def objective_from(
    result: object, num_samples: int | None, device: torch.device | None = None
) -> Objective:
    """Check ``callback_fn()``'s result and turn it into an :class:`Objective`.

    ``device`` (e.g. ``cuda:1`` for a worker bound to that GPU) moves the network there;
    None keeps it where callback_fn put it.
    """
    if not isinstance(result, tuple | list) or len(result) not in (3, 4):
        raise TypeError(
            "callback_fn must return (model, network, dataset, metrics) or "
            f"(network, dataset, loss_fn), got {type(result).__name__} {result!r:.200}"
        )
    if len(result) == 4:
        model, network, dataset, metrics = result
        if not isinstance(metrics, Mapping) or "Loss" not in metrics:
            raise ValueError(
                "the metrics returned by callback_fn must be a dict with the key 'Loss' "
                "(the landscape's height), e.g. {'Loss': sumlens.metrics.Loss()}; "
                f"got {metrics!r:.200}"
            )
        if not isinstance(model, Model):
            raise TypeError(
                "the model returned by callback_fn must be a sumlens.Model, got "
                f"{type(model).__name__}; or return (network, dataset, loss_fn)"
            )
        if not isinstance(network, torch.nn.Module):
            raise TypeError(f"callback_fn's network must be an nn.Module, got {type(network)}")
        loss_fn = _model_loss(model, network)
    else:
        network, dataset, loss_fn = result
        if not isinstance(network, torch.nn.Module):
            raise TypeError(f"callback_fn's network must be an nn.Module, got {type(network)}")
        if loss_fn is not None and not callable(loss_fn):
            raise TypeError(f"callback_fn's loss_fn must be callable or None, got {loss_fn!r}")
    if device is not None:
        network.to(device)
    return Objective(network, take_batches(dataset, num_samples, network_device(network)), loss_fn)
