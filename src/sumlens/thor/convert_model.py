"""``ConvertModelUtils``: the training driver for a THOR run.

MindSpore's ``ModelThor`` rewrites the dataset-sink loop so that one curvature step
alternates with ``frequency - 1`` cheaper ones (and in non-sink mode ``frequency`` has
no effect). Here the :class:`Thor` optimizer counts its own steps and arms the hooks of
the next step itself, so the ordinary :class:`sumlens.train.Model` already does the
right thing in both modes, callbacks fire every step and ``fit`` may evaluate in sink
mode. What the conversion adds is the loss-scale hand-over: ``Model`` unscales the
gradients itself when it has a loss-scale manager, so the optimizer is told to read the
scale of the output gradients from that manager instead of dividing the gradients by
its own ``loss_scale`` a second time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch import nn

from sumlens.thor.optimizer import Thor
from sumlens.train.loss_scale import LossScaleManager
from sumlens.train.model import Model, TrainOneStep

__all__ = ["ConvertModelUtils"]


class ConvertModelUtils:
    """Builds the ``Model`` that trains with THOR."""

    @staticmethod
    def convert_to_thor_model(
        model: Model,
        network: nn.Module,
        loss_fn: Callable[..., Any] | None = None,
        optimizer: Any = None,
        metrics: Any = None,
        amp_level: str = "O0",
        loss_scale_manager: LossScaleManager | None = None,
        keep_batchnorm_fp32: bool = False,
    ) -> Model:
        """A new ``Model(network, loss_fn, optimizer, metrics, ...)`` for a :class:`Thor`
        ``optimizer``; ``model`` itself, unchanged, for any other optimizer (as in
        MindSpore).

        ``network`` may be a :class:`TrainOneStep` (e.g. ``model.train_network``): its
        network, loss, optimizer and loss-scale manager fill the arguments left None.
        """
        if isinstance(network, TrainOneStep):
            loss_fn = network.loss_fn if loss_fn is None else loss_fn
            optimizer = network.optimizer if optimizer is None else optimizer
            if loss_scale_manager is None:
                loss_scale_manager = network.loss_scale_manager
            network = network.network
        if not isinstance(optimizer, Thor):
            return model
        thor_model = Model(
            network,
            loss_fn,
            optimizer,
            metrics,
            amp_level=amp_level,
            loss_scale_manager=loss_scale_manager,
            keep_batchnorm_fp32=keep_batchnorm_fp32,
        )
        manager = thor_model.loss_scale_manager
        if manager is not None:
            optimizer.set_loss_scale(manager)
        return thor_model
