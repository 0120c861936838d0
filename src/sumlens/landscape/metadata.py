"""``train_metadata.json`` and the ``collect_landscape`` overrides, checked (spec section 2).

SummaryCollector writes the metadata file read-only (0400) next to the weight files.
Overrides given to ``gen_landscapes_with_multi_process`` are applied to a copy in memory;
the file is never rewritten (MindSpore rewrites it, which fails without root and makes
one call's override silently persist into the next).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import Any

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
OVERRIDE_KEYS = ("landscape_size", "unit", "num_samples", "create_landscape", "intervals")
UNITS = ("step", "epoch")
MIN_SIZE, MAX_SIZE = 3, 256
MIN_INTERVAL = 3


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_landscape_size(value: object, where: str = "landscape_size") -> int:
    if not _is_int(value):
        raise TypeError(f"{where} must be an int, got {type(value).__name__} {value!r}")
    if not MIN_SIZE <= value <= MAX_SIZE:  # type: ignore[operator]
        raise ValueError(f"{where} must be in [{MIN_SIZE}, {MAX_SIZE}], got {value}")
    return int(value)  # type: ignore[arg-type]


def check_unit(value: object, where: str = "unit") -> str:
    if value not in UNITS:
        raise ValueError(f"{where} must be one of {UNITS}, got {value!r}")
    return str(value)


def check_num_samples(value: object, where: str = "num_samples") -> int:
    if not _is_int(value):
        raise TypeError(f"{where} must be an int, got {type(value).__name__} {value!r}")
    if value < 1:  # type: ignore[operator]
        raise ValueError(f"{where} must be >= 1, got {value}")
    return int(value)  # type: ignore[arg-type]


def check_create_landscape(value: object, where: str = "create_landscape") -> dict[str, bool]:
    """A dict with exactly the keys ``train`` and ``result``, both bools."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a dict, got {type(value).__name__} {value!r}")
    if set(value) != {"train", "result"}:
        raise ValueError(
            f"{where} must have exactly the keys 'train' and 'result', got {sorted(value)}"
        )
    for key, flag in value.items():
        if not isinstance(flag, bool):
            raise TypeError(f"{where}[{key!r}] must be a bool, got {flag!r}")
    return {"train": value["train"], "result": value["result"]}


def check_intervals(value: object, where: str = "intervals") -> list[list[int]]:
    """A list of int lists, each with at least ``MIN_INTERVAL`` entries."""
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


def check_overrides(collect_landscape: object) -> dict[str, Any]:
    """The checked ``collect_landscape`` argument (empty when None)."""
    if collect_landscape is None:
        return {}
    if not isinstance(collect_landscape, Mapping):
        raise TypeError(
            "collect_landscape must be a dict or None, got "
            f"{type(collect_landscape).__name__} {collect_landscape!r}"
        )
    unknown = [key for key in collect_landscape if key not in OVERRIDE_KEYS]
    if unknown:
        raise ValueError(
            f"collect_landscape keys {unknown} are not supported; allowed: {list(OVERRIDE_KEYS)}"
        )
    checks = {
        "landscape_size": check_landscape_size,
        "unit": check_unit,
        "num_samples": check_num_samples,
        "create_landscape": check_create_landscape,
        "intervals": check_intervals,
    }
    return {
        key: checks[key](value, f"collect_landscape[{key!r}]")
        for key, value in collect_landscape.items()
    }


@dataclasses.dataclass(frozen=True)
class LandscapeSettings:
    """The metadata with overrides applied, ready to use."""

    intervals: list[list[int]]
    files: dict[int, str]
    step_per_epoch: int
    unit: str
    num_samples: int
    landscape_size: int
    create_train: bool
    create_result: bool


def _from_file(check: Any, value: object, where: str) -> Any:
    """``check(value, where)`` with a bad type in the file reported as a ValueError."""
    try:
        return check(value, where)
    except TypeError as err:
        raise ValueError(str(err)) from None


def load_settings(ckpt_dir: str, overrides: Mapping[str, Any]) -> LandscapeSettings:
    """Read ``ckpt_dir/train_metadata.json``, check it, apply ``overrides`` (in memory)."""
    path = os.path.join(ckpt_dir, METADATA_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path} does not exist; please use summary_collector to collect information "
            "to create the json file (SummaryCollector(..., collect_specified_data="
            "{'collect_landscape': {...}}))"
        )
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
