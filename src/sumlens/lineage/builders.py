"""The lineage builders: plain Python objects that know their protobuf form.

Each builder validates its fields where the user creates it (a wrong type names the
field, the value and what is allowed) and turns into the message MindSpore writes with
:meth:`to_proto`. ``SummaryRecord.add_value`` accepts a builder or the message itself.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from sumlens._checks import check_instance, check_int, check_number, check_str
from sumlens._log import warn_once
from sumlens._proto import lineage_pb2

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class LineageBuilder:
    """Base of the builders: subclasses name their plugin and build their message."""

    plugin: str = ""

    def to_proto(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclasses.dataclass
class TrainLineage(LineageBuilder):
    """What a training run was: optimizer, learning rate, loss, data, network, final model.

    ``model_path`` is the checkpoint the run produced; it is stored as MindSpore does, as
    the JSON text ``{"ckpt": path}`` (``""`` without one).
    """

    plugin = "train_lineage"
    optimizer: str | None = None
    learning_rate: float | None = None
    loss_function: str | None = None
    epoch: int | None = None
    parallel_mode: str | None = None
    device_num: int | None = None
    batch_size: int | None = None
    train_dataset_path: str | None = None
    train_dataset_size: int | None = None
    network: str | None = None
    loss: float | None = None
    model_path: str | None = None
    model_size: int | None = None

    def __post_init__(self) -> None:
        owner = "TrainLineage"
        for field in (
            "optimizer",
            "loss_function",
            "parallel_mode",
            "train_dataset_path",
            "network",
            "model_path",
        ):
            check_str(getattr(self, field), field, owner, allow_none=True)
        for field in ("learning_rate", "loss"):  # NaN and infinities are kept as they are
            check_number(getattr(self, field), field, owner, finite=False, allow_none=True)
        for field in ("epoch", "device_num", "batch_size", "train_dataset_size"):
            check_int(
                getattr(self, field), field, owner, INT32_MIN, maximum=INT32_MAX, allow_none=True
            )
        check_int(self.model_size, "model_size", owner, allow_none=True)

    def to_proto(self) -> lineage_pb2.TrainLineage:
        """The ``TrainLineage`` message, with only the fields that were given."""
        msg = lineage_pb2.TrainLineage()
        hyper = {
            "optimizer": self.optimizer,
            "learning_rate": self.learning_rate,
            "loss_function": self.loss_function,
            "epoch": self.epoch,
            "parallel_mode": self.parallel_mode,
            "device_num": self.device_num,
            "batch_size": self.batch_size,
        }
        for field, value in hyper.items():
            if value is not None:
                setattr(msg.hyper_parameters, field, value)
        if self.train_dataset_path is not None:
            msg.train_dataset.train_dataset_path = self.train_dataset_path
        if self.train_dataset_size is not None:
            msg.train_dataset.train_dataset_size = self.train_dataset_size
        if self.network is not None:
            msg.algorithm.network = self.network
        if self.loss is not None:
            msg.algorithm.loss = self.loss
        if self.model_path is not None or self.model_size is not None:
            msg.model.path = json.dumps({"ckpt": self.model_path or ""})
            msg.model.size = self.model_size or 0
        return msg


@dataclasses.dataclass
class EvaluationLineage(LineageBuilder):
    """How a model scored: ``metrics`` (stored as JSON text) and the validation data."""

    plugin = "eval_lineage"
    metrics: Mapping[str, Any] | None = None
    valid_dataset_path: str | None = None
    valid_dataset_size: int | None = None

    def __post_init__(self) -> None:
        owner = "EvaluationLineage"
        allowed = "a dict of metric name to value"
        check_instance(self.metrics, "metrics", owner, Mapping, allowed, allow_none=True)
        check_str(self.valid_dataset_path, "valid_dataset_path", owner, allow_none=True)
        check_int(
            self.valid_dataset_size,
            "valid_dataset_size",
            owner,
            INT32_MIN,
            maximum=INT32_MAX,
            allow_none=True,
        )
        if self.metrics is not None:
            self._metric_json = json.dumps({str(k): _plain(v) for k, v in self.metrics.items()})

    def to_proto(self) -> lineage_pb2.EvaluationLineage:
        """The ``EvaluationLineage`` message."""
        msg = lineage_pb2.EvaluationLineage()
        if self.metrics is not None:
            msg.metric = self._metric_json
        if self.valid_dataset_path is not None:
            msg.valid_dataset.valid_dataset_path = self.valid_dataset_path
        if self.valid_dataset_size is not None:
            msg.valid_dataset.valid_dataset_size = self.valid_dataset_size
        return msg


def _plain(value: Any) -> Any:
    """A JSON-able form of a metric value: numpy/torch values become Python numbers or lists."""
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars, torch tensors
        return _plain(value.tolist())
    raise TypeError(f"metric value {value!r} of type {type(value).__name__} is not JSON-able")


@dataclasses.dataclass
class UserDefinedInfo(LineageBuilder):
    """Custom lineage data: a flat ``{key: int | float | str}`` dict.

    Written as MindSpore does, one ``user_info`` entry per key holding one single-key map
    (``map_int32`` for ints, ``map_double`` for floats, ``map_str`` otherwise), which is
    the only layout MindInsight shows completely. Ints outside int32 are stored as text,
    with one warning.
    """

    plugin = "custom_lineage_data"
    data: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        check_custom_lineage(self.data)

    def to_proto(self) -> lineage_pb2.UserDefinedInfo:
        """The ``UserDefinedInfo`` message."""
        msg = lineage_pb2.UserDefinedInfo()
        for key, value in self.data.items():
            entry = msg.user_info.add()
            if isinstance(value, int) and INT32_MIN <= value <= INT32_MAX:
                entry.map_int32[key] = value
            elif isinstance(value, int):
                warn_once(
                    f"lineage-int64-{key}",
                    "custom lineage %r=%d does not fit int32; stored as text",
                    key,
                    value,
                )
                entry.map_str[key] = str(value)
            elif isinstance(value, float):
                entry.map_double[key] = value
            else:
                entry.map_str[key] = value
        return msg


def check_custom_lineage(
    data: object, where: str = "custom lineage data"
) -> dict[str, int | float | str]:
    """``data`` as a dict, when it is what custom lineage data may be: a mapping of str
    keys to ints, floats or strings (a ``TypeError`` naming ``where`` otherwise)."""
    if not isinstance(data, Mapping):
        raise TypeError(f"{where} must be a dict of str keys, got {type(data).__name__} {data!r}")
    for key, value in data.items():
        if not isinstance(key, str):
            raise TypeError(f"{where} keys must be str, got {type(key).__name__} {key!r}")
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise TypeError(
                f"{where}[{key!r}] must be an int, float or str, got {type(value).__name__} "
                f"{value!r} (sumlens.lineage.from_config() converts others)"
            )
    return dict(data)


@dataclasses.dataclass
class DatasetGraph(LineageBuilder):
    """One operation of a data pipeline and its upstream ``children`` (the root is the last op).

    ``op_type`` names the operation (``"Batch"``, ``"Shuffle"``, the dataset class ...);
    ``params`` are its arguments: bools, ints, floats, strings and lists of strings, stored
    in the matching map of ``OperationParameter``; anything else is stored as its text,
    None not at all (see :func:`set_parameter`).
    """

    plugin = "dataset_graph"
    op_type: str = ""
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    children: list[DatasetGraph] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        owner = "DatasetGraph"
        check_str(self.op_type, "op_type", owner, allow_none=True)
        check_instance(self.params, "params", owner, Mapping, "a dict", allow_none=True)
        for child in self.children:
            check_instance(child, "children", owner, DatasetGraph, "a list of DatasetGraph")

    def to_proto(self) -> lineage_pb2.DatasetGraph:
        """The ``DatasetGraph`` message tree."""
        msg = lineage_pb2.DatasetGraph()
        self._fill(msg)
        return msg

    def _fill(self, msg: lineage_pb2.DatasetGraph) -> None:
        msg.parameter.mapStr["op_type"] = self.op_type
        for key, value in self.params.items():
            set_parameter(msg.parameter, key, value)
        for child in self.children:
            child._fill(msg.children.add())


def set_parameter(
    param: lineage_pb2.OperationParameter,
    key: str,
    value: Any,
    text: Callable[[Any], str] = str,
) -> None:
    """Store ``value`` under ``key`` in the map of ``param`` that fits its type.

    Bools, ints within int32, floats and lists of strings have maps of their own; any
    other value is stored as ``text(value)``, and None not at all (a setting without a
    value). The data lineage of a DataLoader (:func:`sumlens.graph.from_dataloader`)
    and :class:`DatasetGraph` both store their parameters this way.
    """
    if value is None:
        return
    if isinstance(value, bool):
        param.mapBool[key] = value
    elif isinstance(value, int) and INT32_MIN <= value <= INT32_MAX:
        param.mapInt[key] = value
    elif isinstance(value, float):
        param.mapDouble[key] = value
    elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        param.mapStrList[key].strValue.extend(value)
    else:
        param.mapStr[key] = text(value)


def from_config(obj: Any) -> UserDefinedInfo:
    """Custom lineage data from an argparse Namespace, a dataclass or a (nested) dict.

    Nested keys are joined with dots (``{"optim": {"lr": 0.1}}`` -> ``optim.lr``); bools,
    None and lists become their text (``"True"``, ``"None"``, ``"[1, 2]"``), since lineage
    values are ints, floats or strings.
    """
    if isinstance(obj, argparse.Namespace):
        mapping: Mapping[str, Any] = vars(obj)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        mapping = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    elif isinstance(obj, Mapping):
        mapping = obj
    else:
        raise TypeError(
            "from_config() takes an argparse.Namespace, a dataclass instance or a dict, "
            f"got {type(obj).__name__}"
        )
    flat: dict[str, int | float | str] = {}
    _flatten(mapping, "", flat)
    return UserDefinedInfo(flat)


def _flatten(mapping: Mapping[str, Any], prefix: str, out: dict[str, int | float | str]) -> None:
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.asdict(value)
        if isinstance(value, argparse.Namespace):
            value = vars(value)
        if isinstance(value, Mapping):
            _flatten(value, name + ".", out)
        elif isinstance(value, bool) or value is None:
            out[name] = str(value)
        elif isinstance(value, int | str) or (isinstance(value, float) and math.isfinite(value)):
            out[name] = value
        else:
            out[name] = str(value)
