"""``add_hparams``: the three records of TensorBoard's hparams dashboard (plugin ``hparams``).

An experiment (each hyper-parameter's name, type and, if given, its discrete domain; each
metric's tag), a session start (the hyper-parameters' values) and a session end (success),
each a ``HParamsPluginData`` in a value's metadata under the tags the plugin reads. Numbers
are recorded as float64 and strings as strings, as torch's writer records them; bools as
bools (``DATA_TYPE_BOOL``, as TensorBoard's own hparams API writes them: torch's writer
turns them into 1.0 and 0.0). A value of ``None`` is left out, with a warning.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np
from google.protobuf import struct_pb2

from sumlens._checks import check_text
from sumlens._log import warn_once
from sumlens._proto import tensorboard_pb2 as tbpb
from sumlens._proto import tensorboard_plugins_pb2 as plugins
from sumlens.writer.arrays import numeric_array

OWNER = "SummaryWriter.add_hparams"
PLUGIN_NAME = "hparams"
PLUGIN_DATA_VERSION = 0
EXPERIMENT_TAG = "_hparams_/experiment"
SESSION_START_INFO_TAG = "_hparams_/session_start_info"
SESSION_END_INFO_TAG = "_hparams_/session_end_info"
_ALLOWED = "a bool, a number, a str, a one-element tensor or None"


def hparams_values(
    hparam_dict: Mapping[str, object],
    metric_dict: Mapping[str, object],
    hparam_domain_discrete: Mapping[str, Sequence[object]] | None = None,
) -> tuple[tbpb.Summary.Value, tbpb.Summary.Value, tbpb.Summary.Value]:
    """The experiment, session-start and session-end values for ``hparam_dict`` (name ->
    value) and the metrics named by ``metric_dict``'s keys; ``hparam_domain_discrete``
    lists every value a hyper-parameter can take (same type as its value)."""
    for name, given in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(given, Mapping) or not all(isinstance(key, str) for key in given):
            raise TypeError(
                f"For '{OWNER}', the argument '{name}' must be a dict with str keys, "
                f"but got {given!r:.200}"
            )
        for key in given:
            check_text(key, f"{name} key", OWNER)
    domains = _domains(hparam_domain_discrete, hparam_dict)
    start = plugins.SessionStartInfo()
    experiment = plugins.Experiment()
    for name, raw in hparam_dict.items():
        value = _plain(name, raw)
        if value is None:
            warn_once(
                f"hparam-none:{name}",
                "%s: hyper-parameter %r is None and is not recorded (TensorBoard's hparams "
                "hold bools, numbers and strings)",
                OWNER,
                name,
            )
            continue
        data_type = _set(start.hparams[name], value)
        info = experiment.hparam_infos.add(name=name, type=data_type)
        if name in domains:
            info.domain_discrete.SetInParent()
            for choice in domains[name]:
                _set(info.domain_discrete.values.add(), choice)
    for tag in metric_dict:
        experiment.metric_infos.add().name.tag = tag
    end = plugins.SessionEndInfo(status=plugins.STATUS_SUCCESS)
    return (
        _value(EXPERIMENT_TAG, plugins.HParamsPluginData(experiment=experiment)),
        _value(SESSION_START_INFO_TAG, plugins.HParamsPluginData(session_start_info=start)),
        _value(SESSION_END_INFO_TAG, plugins.HParamsPluginData(session_end_info=end)),
    )


def _plain(name: str, value: object) -> bool | float | str | None:
    """A hyper-parameter's value as a bool, float or str (None stays None)."""
    if isinstance(value, str):
        return check_text(value, f"hparam_dict[{name!r}]", OWNER)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if hasattr(value, "__array__") or hasattr(value, "asnumpy") or hasattr(value, "detach"):
        array = numeric_array(value, f"hparam_dict[{name!r}]", OWNER)
        if array.size == 1:
            return float(array.reshape(-1)[0])
        raise ValueError(
            f"For '{OWNER}', the argument 'hparam_dict[{name!r}]' must be {_ALLOWED}, "
            f"but got a tensor of shape {list(array.shape)}"
        )
    raise TypeError(
        f"For '{OWNER}', the argument 'hparam_dict[{name!r}]' must be {_ALLOWED}, "
        f"but got {type(value).__name__} {value!r:.100}"
    )


def _set(target: struct_pb2.Value, value: bool | float | str) -> plugins.DataType:
    """Store ``value`` in a ``google.protobuf.Value``; the hparams data type it has."""
    if isinstance(value, bool):
        target.bool_value = value
        return plugins.DATA_TYPE_BOOL
    if isinstance(value, str):
        target.string_value = value
        return plugins.DATA_TYPE_STRING
    target.number_value = value
    return plugins.DATA_TYPE_FLOAT64


def _domains(
    given: Mapping[str, Sequence[object]] | None, hparam_dict: Mapping[str, object]
) -> dict[str, list[bool | float | str]]:
    """Each discrete domain, checked to name a hyper-parameter and hold values of its type."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise TypeError(
            f"For '{OWNER}', the argument 'hparam_domain_discrete' must be a dict "
            f"{{name: [values]}} or None, but got {type(given).__name__}"
        )
    domains: dict[str, list[bool | float | str]] = {}
    for name, choices in given.items():
        where = f"hparam_domain_discrete[{name!r}]"
        if name not in hparam_dict:
            raise ValueError(
                f"For '{OWNER}', {where} names no hyper-parameter; hparam_dict has "
                f"{', '.join(map(repr, hparam_dict)) or 'none'}"
            )
        kind = _plain(name, hparam_dict[name])
        if isinstance(choices, str) or not isinstance(choices, Sequence):
            raise TypeError(f"For '{OWNER}', {where} must be a list, but got {choices!r:.100}")
        plain = [_plain(name, choice) for choice in choices]
        typed = [choice for choice in plain if choice is not None and type(choice) is type(kind)]
        if kind is None or len(typed) != len(plain):
            raise TypeError(
                f"For '{OWNER}', {where} must list values of the type of hparam_dict[{name!r}] "
                f"({type(hparam_dict[name]).__name__}), but got {choices!r:.100}"
            )
        domains[name] = typed
    return domains


def _value(tag: str, data: plugins.HParamsPluginData) -> tbpb.Summary.Value:
    data.version = PLUGIN_DATA_VERSION
    value = tbpb.Summary.Value(tag=tag)
    value.metadata.plugin_data.plugin_name = PLUGIN_NAME
    value.metadata.plugin_data.content = data.SerializeToString()
    return value
