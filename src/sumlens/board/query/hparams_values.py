"""A run's TensorBoard hyper-parameters (the ``hparams`` plugin) as lineage fields.

torch's ``add_hparams``, Lightning's ``TensorBoardLogger.log_hyperparams``, Hugging Face's
``TensorBoardCallback`` and TensorBoard's own hp API record three ``HParamsPluginData``
messages: an experiment (its ``metric_infos`` name the scalar tags that are the results),
a session start (the hyper-parameter values) and a session end (the status). The newest
kept value of each counts, as in TensorBoard. For the lineage table
(:mod:`sumlens.board.query.lineage_values`) they become:

* ``hparam/<name>``: each hyper-parameter, kind hyper, typed (numbers stay numbers, bools
  are ``true``/``false``, lists their JSON text; one without a value is no value). The table
  folds them with the fields recording the same quantity (``learning_rate``, ``custom/lr``)
  where their values agree (:mod:`sumlens.board.query.lineage_fold`).
* ``metric/<tag>`` (``metric/<group>/<tag>`` when the metric names a sub-run): the last
  value of that scalar tag, except Lightning's placeholder: ``log_hyperparams`` without
  metrics logs ``hp_metric = -1`` so that TensorBoard shows the hyper-parameters at all, and
  an ``hp_metric`` that never held anything else is no result. A MindSpore evaluation
  metric of the same name in the same run is kept.
* ``session_status``: the session end's status (``success``, ``failure``, ``running``).

Messages may be crafted: a value that cannot be read or is no hparams message is a
problem of the run, and at most :data:`~sumlens.board.query.lineage_values.MAX_FIELDS`
hyper-parameters and metrics are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from google.protobuf import struct_pb2

from sumlens._proto import tensorboard_plugins_pb2
from sumlens.board.data.surface import ReadSurface, SeriesRef
from sumlens.board.errors import ValueUnreadable
from sumlens.board.proto_json import message_json
from sumlens.board.query.lineage_values import MAX_FIELDS, RunLineage, Value, add_field, typed

PLUGIN = "hparams"
TAGS = ("_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info")
"""The tags TensorBoard's writers give the three messages."""
PLACEHOLDER = "hp_metric"
"""Lightning's metric of runs that logged hyper-parameters without one (always -1)."""
STATUS_COLUMN = "session_status"
TOO_MANY_HPARAMS = f"more than {MAX_FIELDS} hyper-parameters or metrics: the rest are left out"
_TIME_NAMED = re.compile(r"\d{9,10}\.\d+")
"""A directory named by ``str(time.time())`` (seconds since 1973, as torch names them)."""

Signature = tuple[tuple[str, int | None, int, int, float, int, int], ...]


@dataclass(frozen=True, slots=True)
class Session:
    """What a run's hparams messages say: hyper-parameter values by name, the metrics'
    (group, tag) pairs, the status (None without a session end) and what could not be read."""

    hparams: dict[str, Value]
    metrics: tuple[tuple[str, str], ...]
    status: str | None
    problems: tuple[str, ...]


def signature(surface: ReadSurface, run_id: str) -> Signature:
    """Which hparams values a run keeps now (changes when one arrives or is replaced)."""
    found = []
    for tag in TAGS:
        for samples in surface.samples(run_id, PLUGIN, tag):
            if not samples.items.size:
                continue
            last = samples.items[-1]
            found.append((tag, samples.rank, int(last["pos"]), int(last["step"]),
                          float(last["wall"]), int(last["file"]), int(last["offset"])))  # fmt: skip
    return tuple(found)


def read_session(surface: ReadSurface, run_id: str) -> Session | None:
    """The run's hparams messages read (None when it keeps none)."""
    problems: list[str] = []
    parts: dict[str, tensorboard_plugins_pb2.HParamsPluginData] = {}
    for tag in TAGS:
        data = _newest(surface, run_id, tag, problems)
        if data is not None and data.WhichOneof("data") is not None:
            parts[str(data.WhichOneof("data"))] = data
    if not parts and not problems:
        return None
    hparams: dict[str, Value] = {}
    if "session_start_info" in parts:
        given = parts["session_start_info"].session_start_info.hparams
        names = sorted(given)
        if len(names) > MAX_FIELDS:
            problems.append(TOO_MANY_HPARAMS)
        hparams = {name: _typed(given[name]) for name in names[:MAX_FIELDS]}
    metrics: list[tuple[str, str]] = []
    if "experiment" in parts:
        infos = parts["experiment"].experiment.metric_infos
        if len(infos) > MAX_FIELDS:
            problems.append(TOO_MANY_HPARAMS)
        metrics = [(info.name.group, info.name.tag) for info in infos[:MAX_FIELDS]]
    status = None
    if "session_end_info" in parts:
        status = _status(parts["session_end_info"].session_end_info.status)
    return Session(hparams, tuple(dict.fromkeys(metrics)), status, tuple(problems))


def _newest(
    surface: ReadSurface, run_id: str, tag: str, problems: list[str]
) -> tensorboard_plugins_pb2.HParamsPluginData | None:
    """The newest kept value of ``tag`` (the lowest rank's), or None."""
    for samples in surface.samples(run_id, PLUGIN, tag):
        if not samples.items.size:
            continue
        try:
            event = surface.value(samples, samples.items.size - 1)
        except ValueUnreadable as err:
            problems.append(f"{tag}: {err}")
            return None
        if event is None:
            return None
        if not isinstance(event.value, tensorboard_plugins_pb2.HParamsPluginData):
            problems.append(f"{tag}: not a TensorBoard hparams message")
            return None
        return event.value
    return None


def _typed(value: struct_pb2.Value) -> Value:
    """A hyper-parameter's ``google.protobuf.Value`` as the table holds it."""
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        return typed(value.number_value)
    if kind == "bool_value":
        return typed(value.bool_value)
    if kind == "string_value":
        return value.string_value
    if kind in ("list_value", "struct_value"):
        try:
            return typed(message_json(value))
        except RecursionError:  # nested past the stack
            return "(cannot be shown)"
    return None  # null_value, or no value at all


def _status(status: int) -> str:
    try:
        name = tensorboard_plugins_pb2.Status.Name(status)
    except ValueError:  # a number the enum does not know
        return f"status {status}"
    return name.removeprefix("STATUS_").lower()


def metric_values(surface: ReadSurface, run_id: str, session: Session) -> dict[str, Value]:
    """The last value of each of the session's metrics in run ``run_id`` (or its group's
    sub-run), by column id; Lightning's unused placeholder and metrics never logged left out."""
    found: dict[str, Value] = {}
    series: dict[str, dict[str, SeriesRef]] = {}
    for group, tag in session.metrics:
        source = _group_run(run_id, group)
        if source not in series:
            refs = surface.series(source)
            series[source] = {ref.tag: ref for ref in reversed(refs)}  # the lowest rank wins
        ref = series[source].get(tag)
        if ref is None:
            continue
        values = surface.points(ref)["value"]
        if not values.size or (tag == PLACEHOLDER and bool((values == -1).all())):
            continue
        found[f"metric/{group.strip('/')}/{tag}" if group else f"metric/{tag}"] = typed(
            float(values[-1])
        )
    return found


def _group_run(run_id: str, group: str) -> str:
    group = group.strip("/")
    if not group:
        return run_id
    return f"./{group}" if run_id == "./" else f"{run_id}/{group}"


def with_hparams(
    lineage: RunLineage | None, session: Session, metrics: dict[str, Value]
) -> RunLineage:
    """A copy of ``lineage`` (MindSpore's; None: none) with the session's fields added."""
    found = RunLineage()
    if lineage is not None:
        found = RunLineage(
            dict(lineage.values), lineage.graph, list(lineage.problems), lineage.extra_fields
        )
    found.problems.extend(session.problems)
    for name, value in session.hparams.items():
        add_field(found, f"hparam/{name}", value)
    for name, value in metrics.items():
        if name not in found.values:
            add_field(found, name, value)
    if session.status is not None:
        found.values[STATUS_COLUMN] = session.status
    return found


def time_parent(run_id: str) -> str | None:
    """The run id of the directory above a run named by the time, e.g. ``./a`` for
    ``./a/1700000000.5`` (None when the run is not named so).

    torch's ``add_hparams`` writes its records and one scalar per metric into a new
    directory ``<log_dir>/<str(time.time())>``, so every ``add_hparams`` call is a run of
    its own beside the run it describes; users expect them to be that run's
    hyper-parameters (pytorch/pytorch#40574), and the lineage table shows them so.
    """
    parent, _, name = run_id.rpartition("/")
    if not parent or not _TIME_NAMED.fullmatch(name):
        return None
    return "./" if parent == "." else parent
