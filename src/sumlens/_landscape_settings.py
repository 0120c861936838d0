"""The loss-landscape settings and ``train_metadata.json``: one contract, checked in one place.

``SummaryCollector(collect_specified_data={"collect_landscape": settings})`` saves the
weights a loss landscape is computed from and writes the settings, with the saved files,
to ``<summary_dir>/ckpt_dir/train_metadata.json``; ``SummaryLandscape`` reads that file,
and its own ``collect_landscape`` argument overrides part of it. Both sides check with
the functions here, so a value the landscape would refuse is refused where it is given,
by ``SummaryCollector(...)``, with the message the landscape gives. This module needs
neither torch nor the writer: training and the landscape both import it.

The settings (MindSpore's keys):

* ``landscape_size``: points per axis, an int in [3, 256] (default 40);
* ``unit``: ``"step"`` or ``"epoch"``, what the numbers of ``intervals`` count
  (default ``"step"``);
* ``num_samples``: samples scored per point, an int >= 1 (default 2048);
* ``create_landscape``: ``{"train": bool, "result": bool}``, which landscapes to make
  (default both). The collector fills a missing key with True, as MindSpore's does; an
  override given to the landscape must name both, as MindSpore's must;
* ``intervals``: a non-empty list of int lists, each with at least 3 entries (a plane
  needs 3 snapshots): the steps or epochs whose weights are saved, one train landscape
  per list. The collector needs it; the landscape takes it from the file.

``train_metadata.json`` holds exactly :data:`METADATA_KEYS`: ``epoch_group``
(``{"0": first interval, "1": ...}``), ``model_params_file_map`` (``{"<n>": path of the
weights of step or epoch n}``, only what was saved), ``step_per_epoch``, and the other
four settings. The collector writes it once (only where it is missing); overrides are
applied in memory, never written back (MindSpore rewrites the file, which fails without
root and lets one call's override persist into the next).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

SETTINGS_KEYS = ("landscape_size", "unit", "num_samples", "create_landscape", "intervals")
DEFAULTS: dict[str, Any] = {
    "landscape_size": 40,
    "unit": "step",
    "num_samples": 2048,
    "create_landscape": {"train": True, "result": True},
}
"""Every setting but ``intervals``, which has no default."""
HOW_TO_COLLECT = (
    "Loss landscapes are computed from the weights a SummaryCollector saves when "
    "collect_landscape is given. It is off by default in sumlens (MindSpore turns it on) "
    "because it writes a weight file at every step or epoch of the intervals. Turn it on "
    "for the training run, e.g. SummaryCollector(summary_dir, collect_specified_data="
    "{'collect_landscape': {'landscape_size': 40, 'unit': 'epoch', 'num_samples': 2048, "
    "'create_landscape': {'train': True, 'result': True}, 'intervals': [[1, 2, 3, 4, 5]]}}), "
    "train again, then call gen_landscapes_with_multi_process."
)
"""What to do when a run has no landscape weights (said where they are missing)."""
UNITS = ("step", "epoch")
MIN_SIZE, MAX_SIZE = 3, 256
MIN_INTERVAL = 3
METADATA_FILE = "train_metadata.json"
METADATA_KEYS = (
    "epoch_group",
    "model_params_file_map",
    "step_per_epoch",
    "unit",
    "num_samples",
    "landscape_size",
    "create_landscape",
)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def check_landscape_size(value: object, where: str = "landscape_size") -> int:
    if not _is_int(value):
        raise TypeError(f"{where} must be an int, got {type(value).__name__} {value!r}")
    if not MIN_SIZE <= value <= MAX_SIZE:
        raise ValueError(f"{where} must be in [{MIN_SIZE}, {MAX_SIZE}], got {value}")
    return int(value)


def check_unit(value: object, where: str = "unit") -> str:
    if value not in UNITS:
        raise ValueError(f"{where} must be one of {UNITS}, got {value!r}")
    return str(value)


def check_num_samples(value: object, where: str = "num_samples") -> int:
    if not _is_int(value):
        raise TypeError(f"{where} must be an int, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{where} must be >= 1, got {value}")
    return int(value)


def check_create_landscape(value: object, where: str = "create_landscape") -> dict[str, bool]:
    """A dict with exactly the keys ``train`` and ``result``, both bools."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a dict, got {type(value).__name__} {value!r}")
    if set(value) != {"train", "result"}:
        keys = sorted(map(str, value))
        raise ValueError(f"{where} must have exactly the keys 'train' and 'result', got {keys}")
    for key, flag in value.items():
        if not isinstance(flag, bool):
            raise TypeError(f"{where}[{key!r}] must be a bool, got {flag!r}")
    return {"train": value["train"], "result": value["result"]}


def check_intervals(value: object, where: str = "intervals") -> list[list[int]]:
    """A non-empty list of int lists, each with at least :data:`MIN_INTERVAL` entries."""
    if not isinstance(value, list | tuple) or not value:
        raise TypeError(f"{where} must be a non-empty list of lists of ints, got {value!r}")
    out = []
    for interval in value:
        if not isinstance(interval, list | tuple) or not all(_is_int(n) for n in interval):
            raise TypeError(f"{where} must hold lists of ints, got {interval!r} in {value!r}")
        if len(interval) < MIN_INTERVAL:
            raise ValueError(
                f"each of {where} needs at least {MIN_INTERVAL} entries (a plane needs 3 "
                f"snapshots), got {list(interval)!r}"
            )
        out.append([int(n) for n in interval])
    return out


_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "landscape_size": check_landscape_size,
    "unit": check_unit,
    "num_samples": check_num_samples,
    "create_landscape": check_create_landscape,
    "intervals": check_intervals,
}


def _known_keys(collect_landscape: object) -> Mapping[str, Any]:
    """``collect_landscape`` when it is a dict of :data:`SETTINGS_KEYS` only."""
    if not isinstance(collect_landscape, Mapping):
        raise TypeError(
            "collect_landscape must be a dict or None, got "
            f"{type(collect_landscape).__name__} {collect_landscape!r}"
        )
    unknown = [key for key in collect_landscape if key not in SETTINGS_KEYS]
    if unknown:
        raise ValueError(
            f"collect_landscape keys {unknown} are not supported; allowed: {list(SETTINGS_KEYS)}"
        )
    return collect_landscape


def check_overrides(collect_landscape: object) -> dict[str, Any]:
    """The checked settings given as ``collect_landscape`` (empty for None): only the
    keys given, each checked (the landscape's overrides of ``train_metadata.json``)."""
    if collect_landscape is None:
        return {}
    return {
        key: _CHECKS[key](value, f"collect_landscape[{key!r}]")
        for key, value in _known_keys(collect_landscape).items()
    }


def check_collect_landscape(collect_landscape: object) -> dict[str, Any] | None:
    """The collector's settings, checked and completed with :data:`DEFAULTS`; None when
    off (None, or an empty dict, on which MindSpore crashes)."""
    if collect_landscape is None:
        return None
    settings = _known_keys(collect_landscape)
    if not settings:
        return None
    if "intervals" not in settings:
        raise TypeError(
            "collect_landscape needs 'intervals', a list of lists of ints (the steps or "
            f"epochs whose weights are saved), got {dict(settings)!r}"
        )
    create = settings.get("create_landscape")
    if isinstance(create, Mapping):  # a missing key is True, as in MindSpore's collector
        settings = {**settings, "create_landscape": {**DEFAULTS["create_landscape"], **create}}
    return {**DEFAULTS, **check_overrides(settings)}


def metadata(settings: Mapping[str, Any], files: Mapping[int, str], step_per_epoch: int) -> dict:
    """The content of ``train_metadata.json`` for the collector's ``settings`` (from
    :func:`check_collect_landscape`) and the weight ``files`` it saved (number -> path)."""
    return {
        "epoch_group": {str(i): list(v) for i, v in enumerate(settings["intervals"])},
        "model_params_file_map": {str(n): path for n, path in files.items()},
        "step_per_epoch": step_per_epoch,
        "unit": settings["unit"],
        "num_samples": settings["num_samples"],
        "landscape_size": settings["landscape_size"],
        "create_landscape": dict(settings["create_landscape"]),
    }


@dataclasses.dataclass(frozen=True)
class LandscapeSettings:
    """``train_metadata.json`` with the overrides applied, ready to use."""

    intervals: list[list[int]]
    files: dict[int, str]
    step_per_epoch: int
    unit: str
    num_samples: int
    landscape_size: int
    create_train: bool
    create_result: bool


def _from_file(check: Callable[[Any, str], Any], value: object, where: str) -> Any:
    """``check(value, where)`` with a bad type in the file reported as a ValueError."""
    try:
        return check(value, where)
    except TypeError as err:
        raise ValueError(str(err)) from None


def load_settings(ckpt_dir: str, overrides: Mapping[str, Any]) -> LandscapeSettings:
    """Read ``ckpt_dir/train_metadata.json``, check it, apply ``overrides`` (from
    :func:`check_overrides`) in memory."""
    path = os.path.join(ckpt_dir, METADATA_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} does not exist. {HOW_TO_COLLECT}")
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a JSON object, got {type(data).__name__}")
    unknown = [key for key in data if key not in METADATA_KEYS]
    missing = [key for key in METADATA_KEYS if key not in data]
    if unknown or missing:
        raise ValueError(
            f"{path} has unknown keys {unknown} / lacks keys {missing}; "
            f"expected exactly {list(METADATA_KEYS)}"
        )
    merged = {**data, **{k: v for k, v in overrides.items() if k != "intervals"}}
    where = METADATA_FILE
    groups = data["epoch_group"]
    if "intervals" in overrides:
        intervals = overrides["intervals"]
    elif isinstance(groups, dict):
        intervals = _from_file(
            check_intervals, [groups[k] for k in sorted(groups, key=int)], f"{where} epoch_group"
        )
    else:
        raise ValueError(f"{where} epoch_group must be an object of lists, got {groups!r}")
    file_map = data["model_params_file_map"]
    if not isinstance(file_map, dict):
        raise ValueError(f"{where} model_params_file_map must be an object, got {file_map!r}")
    files = {int(n): str(p) for n, p in file_map.items()}
    for interval in intervals:
        for position, number in enumerate(interval, start=1):
            if number not in files:
                raise ValueError(
                    f"does not exist {position}th checkpoint in intervals: {number} of "
                    f"{interval} has no weight file in {where} (saved: {sorted(files)})"
                )
    step_per_epoch = merged["step_per_epoch"]
    if not _is_int(step_per_epoch):
        raise ValueError(f"{where} step_per_epoch must be an int, got {step_per_epoch!r}")
    create = _from_file(
        check_create_landscape, merged["create_landscape"], f"{where} create_landscape"
    )
    return LandscapeSettings(
        intervals=intervals,
        files=files,
        step_per_epoch=step_per_epoch,
        unit=_from_file(check_unit, merged["unit"], f"{where} unit"),
        num_samples=_from_file(check_num_samples, merged["num_samples"], f"{where} num_samples"),
        landscape_size=_from_file(
            check_landscape_size, merged["landscape_size"], f"{where} landscape_size"
        ),
        create_train=create["train"],
        create_result=create["result"],
    )
