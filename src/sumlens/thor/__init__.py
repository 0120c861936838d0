"""THOR, the trace-based hardware-driven natural-gradient optimizer, for PyTorch.

::

    from sumlens.thor import thor, ConvertModelUtils

    opt = thor(net, learning_rate=0.05, damping=0.03, momentum=0.9, frequency=10)
    model = Model(net, loss_fn=nn.CrossEntropyLoss(), optimizer=opt, metrics={"acc"})
    model = ConvertModelUtils.convert_to_thor_model(
        model, network=net, loss_fn=nn.CrossEntropyLoss(), optimizer=opt, metrics={"acc"}
    )
    model.train(5, train_batches)

``thor``/``Thor`` (:mod:`.optimizer`) is the optimizer; ``ConvertNetUtils``
(:mod:`.convert_net`) attaches the statistic hooks; ``ConvertModelUtils``
(:mod:`.convert_model`) builds the training ``Model``. The per-layer mathematics is in
:mod:`.precondition`, the statistics in :mod:`.factors`, the block inverses in
:mod:`.inverse` and the per-step values in :mod:`.schedule`.
"""

from sumlens.thor.convert_model import ConvertModelUtils
from sumlens.thor.convert_net import ConvertNetUtils
from sumlens.thor.optimizer import ParamInfo, Thor, thor
from sumlens.thor.precondition import Factors

__all__ = ["ConvertModelUtils", "ConvertNetUtils", "Factors", "ParamInfo", "Thor", "thor"]
