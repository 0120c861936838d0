"""Graphs for MindInsight: a PyTorch model's computational graph and a DataLoader's lineage.

* :func:`from_module` captures a model's operator graph with ``torch.export`` (dict
  inputs and keyword arguments included) and returns MindSpore's ``GraphProto``, with
  collapsible name scopes from the module hierarchy (``Default/conv1-Conv2d/...``). A
  model that cannot be traced gets its module-hierarchy graph instead, with one warning.
  ``SummaryRecord(network=model)`` writes it once, from the model's first forward call.
* :func:`from_dataloader` returns a DataLoader's ``DatasetGraph`` (dataset, transforms,
  sampler, batch settings), written with ``add_value("dataset_graph", ...)``.

Needs torch (the ``sumlens[torch]`` extra).
"""

from sumlens.graph.capturing import (
    FirstCall,
    GraphCapture,
    capture,
    from_module,
    unwrap,
    watch_inputs,
)
from sumlens.graph.dataloader import from_dataloader

__all__ = [
    "FirstCall",
    "GraphCapture",
    "capture",
    "from_dataloader",
    "from_module",
    "unwrap",
    "watch_inputs",
]
