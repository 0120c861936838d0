"""The data lineage of a ``torch.utils.data.DataLoader`` as MindSpore's ``DatasetGraph``.

MindSpore writes a data pipeline as a tree whose root is the last operation (``Batch``)
and whose ``children`` are the operations upstream; a ``Map`` node lists its transforms
in ``operations``, and a node's sampler goes in ``sampler``. MindInsight shows the tree
in its lineage view. A DataLoader maps onto it as::

    Batch      batch_size, drop_last, shuffle, num_workers, collate_fn, ...; sampler
    └─ Map     the dataset's transforms (when it has any), one operation each
       └─ <dataset class>   num_samples, tensors (for a TensorDataset) ...
          └─ <wrapped dataset(s)>   for Subset, ConcatDataset and user wrappers

Transforms are found in the attributes ``transform``, ``target_transform`` and
``transforms`` (a Compose-like object with a ``transforms`` list is expanded); each
becomes an operation named by its class (or function) with its simple settings.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Sequence
from typing import Any

import torch
from torch.utils import data

from sumlens._proto import lineage_pb2
from sumlens.lineage.builders import set_parameter

TRANSFORM_ATTRIBUTES = ("transform", "target_transform", "transforms", "transform_fn")
MAX_TEXT = 200
MAX_DEPTH = 8
"""Wrapped datasets deeper than this are not followed (a guard against cycles)."""


def _put(param: lineage_pb2.OperationParameter, key: str, value: Any) -> None:
    """Store ``value`` in the map of ``param`` that fits its type (short text for others)."""
    set_parameter(param, key, value, _text)


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def _name(obj: Any) -> str:
    """Class or function name of a transform, collate function or sampler."""
    if isinstance(obj, functools.partial):
        return _name(obj.func)
    class_name = type(obj).__name__
    if isinstance(obj, type):
        name = obj.__name__
    elif inspect.isroutine(obj):
        name = getattr(obj, "__name__", class_name)
    else:
        name = class_name
    return "lambda" if name == "<lambda>" else name


def _settings(obj: Any) -> dict[str, Any]:
    """The simple public settings of an object (numbers, bools, strings, short lists)."""
    found: dict[str, Any] = {}
    for key, value in sorted(getattr(obj, "__dict__", {}).items()):
        if key.startswith("_") or callable(value):
            continue
        if isinstance(value, bool | int | float | str):
            found[key] = value
        elif isinstance(value, list | tuple) and all(
            isinstance(v, bool | int | float | str) for v in value
        ):
            found[key] = _text(list(value))
        elif isinstance(value, torch.Tensor) and value.numel() <= 16:
            found[key] = _text(value.tolist())
    return found


def _operations(transform: Any, applies_to: str) -> list[lineage_pb2.Operation]:
    inner = getattr(transform, "transforms", None)
    if isinstance(inner, Sequence) and not isinstance(inner, str) and all(map(callable, inner)):
        return [op for item in inner for op in _operations(item, applies_to)]
    op = lineage_pb2.Operation()
    param = op.operationParam
    param.mapStr["tensor_op_name"] = _name(transform)
    module = getattr(transform, "__module__", None) or type(transform).__module__
    param.mapStr["tensor_op_module"] = str(module)
    if applies_to != "transform":
        param.mapStr["applies_to"] = applies_to
    if not inspect.isroutine(transform):
        for key, value in _settings(transform).items():
            if key not in ("tensor_op_name", "tensor_op_module"):
                _put(param, key, value)
    return [op]


def _transforms(dataset: Any) -> list[lineage_pb2.Operation]:
    found: list[lineage_pb2.Operation] = []
    attrs = vars(dataset) if hasattr(dataset, "__dict__") else {}
    for key in TRANSFORM_ATTRIBUTES:
        if key == "transforms" and ("transform" in attrs or "target_transform" in attrs):
            continue  # torchvision keeps both; `transforms` wraps the other two
        value = attrs.get(key)
        applies_to = "target" if key == "target_transform" else "transform"
        if callable(value):
            found += _operations(value, applies_to)
        elif isinstance(value, Sequence) and not isinstance(value, str):
            found += [
                op for item in value if callable(item) for op in _operations(item, applies_to)
            ]
    return found


def _inner_datasets(dataset: Any) -> list[Any]:
    attrs = vars(dataset) if hasattr(dataset, "__dict__") else {}
    inner = attrs.get("datasets")
    if isinstance(inner, Sequence) and inner and all(isinstance(d, data.Dataset) for d in inner):
        return list(inner)
    found = [v for k, v in attrs.items() if isinstance(v, data.Dataset) and k != "data_source"]
    return found


def _dataset_params(dataset: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"dataset_module": type(dataset).__module__}
    with contextlib.suppress(TypeError):  # an IterableDataset has no __len__
        params["num_samples"] = len(dataset)
    if isinstance(dataset, data.TensorDataset):
        params["tensors"] = ", ".join(
            f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}" for t in dataset.tensors
        )
    if isinstance(dataset, data.Subset):
        params["num_indices"] = len(dataset.indices)
    if isinstance(dataset, data.IterableDataset):
        params["iterable"] = True
    for key, value in _settings(dataset).items():
        params.setdefault(key, value)
    return params


def _node(
    msg: lineage_pb2.DatasetGraph, op_type: str, params: dict[str, Any]
) -> lineage_pb2.DatasetGraph:
    msg.parameter.mapStr["op_type"] = op_type
    for key, value in params.items():
        _put(msg.parameter, key, value)
    return msg


def _fill_dataset(msg: lineage_pb2.DatasetGraph, dataset: Any, depth: int) -> None:
    operations = _transforms(dataset)
    if operations:
        _node(msg, "Map", {"input_columns": "sample"})
        msg.operations.extend(operations)
        msg = msg.children.add()
    _node(msg, type(dataset).__name__, _dataset_params(dataset))
    if depth < MAX_DEPTH:
        for inner in _inner_datasets(dataset):
            _fill_dataset(msg.children.add(), inner, depth + 1)


def _sampler(sampler: Any) -> lineage_pb2.Operation:
    op = lineage_pb2.Operation()
    op.operationParam.mapStr["sampler_name"] = type(sampler).__name__
    op.operationParam.mapStr["sampler_module"] = type(sampler).__module__
    if isinstance(sampler, data.RandomSampler | data.WeightedRandomSampler):
        _put(op.operationParam, "num_samples", sampler.num_samples)
        _put(op.operationParam, "replacement", sampler.replacement)
    else:
        for key, value in _settings(sampler).items():
            _put(op.operationParam, key, value)
        with contextlib.suppress(TypeError):
            _put(op.operationParam, "num_samples", len(sampler))
    return op


def _shuffles(sampler: Any) -> bool:
    if isinstance(sampler, data.RandomSampler | data.SubsetRandomSampler):
        return True
    if isinstance(sampler, data.BatchSampler):
        return _shuffles(sampler.sampler)
    return bool(getattr(sampler, "shuffle", False))  # DistributedSampler and the like


def from_dataloader(loader: data.DataLoader) -> lineage_pb2.DatasetGraph:
    """The ``DatasetGraph`` (data lineage) of ``loader``, as MindInsight shows it.

    The root ``Batch`` node holds ``batch_size``, ``drop_last``, ``shuffle`` (a random
    sampler), ``num_workers``, ``collate_fn``, ``pin_memory`` and, when workers are used,
    ``prefetch_factor`` and ``persistent_workers``; its ``sampler`` names the sampler.
    Below it come the dataset's transforms (a ``Map`` node) and the dataset itself, then
    any datasets it wraps. Write it with ``record.add_value("dataset_graph", name, g)``.
    """
    if not isinstance(loader, data.DataLoader):
        raise TypeError(f"loader must be a torch DataLoader, got {type(loader).__name__}")
    graph = lineage_pb2.DatasetGraph()
    sampler = loader.sampler
    params: dict[str, Any] = {
        "batch_size": loader.batch_size,
        "drop_last": bool(loader.drop_last),
        "shuffle": _shuffles(loader.batch_sampler if loader.batch_size is None else sampler),
        "num_workers": int(loader.num_workers),
        "collate_fn": _name(loader.collate_fn) if loader.collate_fn is not None else None,
        "pin_memory": bool(loader.pin_memory),
    }
    if loader.batch_size is None and loader.batch_sampler is not None:
        params["batch_sampler"] = type(loader.batch_sampler).__name__
    if loader.num_workers > 0:
        params["prefetch_factor"] = loader.prefetch_factor
        params["persistent_workers"] = bool(loader.persistent_workers)
    _node(graph, "Batch", params)
    if not isinstance(loader.dataset, data.IterableDataset):
        graph.sampler.CopyFrom(_sampler(sampler))
    _fill_dataset(graph.children.add(), loader.dataset, 0)
    return graph
