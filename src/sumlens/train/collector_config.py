"""Argument checks and the tensor-step schedule of :class:`sumlens.SummaryCollector`.

Kept apart from the callback so that the rules of the spec (shared/specs/summary-collector.md
sections 1, 2, 5, 7 and 8) can be read and unit-tested on their own.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from sumlens._log import logger

HYPER_CONFIG_ENV = "MINDINSIGHT_HYPER_CONFIG"
MAX_ENV_LENGTH = 100_000
MAX_DIR_LENGTH = 1024
TENSOR_STEP_LIMIT = 20

BOOL_KEYS = (
    "collect_metric",
    "collect_graph",
    "collect_train_lineage",
    "collect_eval_lineage",
    "collect_input_data",
    "collect_dataset_graph",
    "collect_learning_rate",
)
ALLOWED_KEYS = (*BOOL_KEYS, "histogram_regular", "collect_landscape")

DEFAULT_DATA: dict[str, Any] = {
    "collect_metric": True,
    "collect_graph": True,
    "collect_train_lineage": True,
    "collect_eval_lineage": True,
    "collect_input_data": True,
    "collect_dataset_graph": True,
    "collect_learning_rate": True,
    "histogram_regular": None,
    "collect_landscape": None,  # off by default (DESIGN "Defaults stay cheap")
}

LANDSCAPE_KEYS = ("landscape_size", "unit", "num_samples", "create_landscape", "intervals")
LANDSCAPE_DEFAULTS: dict[str, Any] = {
    "landscape_size": 40,
    "unit": "step",
    "num_samples": 2048,
    "create_landscape": {"train": True, "result": True},
}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_positive_int(name: str, value: object, *, optional: bool = False) -> int | None:
    """``value`` must be an int > 0 (or None when ``optional``)."""
    if value is None and optional:
        return None
    if not _is_int(value):
        kind = "None or an int" if optional else "an int"
        raise TypeError(
            f"For 'SummaryCollector', '{name}' must be {kind}, "
            f"but got {type(value).__name__} {value!r}"
        )
    if value <= 0:  # type: ignore[operator]
        raise ValueError(f"For 'SummaryCollector', '{name}' must be > 0, but got {value}")
    return value  # type: ignore[return-value]


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(
            f"For 'SummaryCollector', '{name}' must be a bool, "
            f"but got {type(value).__name__} {value!r}"
        )
    return value


def check_summary_dir(summary_dir: object) -> str:
    """The real path of ``summary_dir`` (not created here)."""
    if isinstance(summary_dir, os.PathLike):
        summary_dir = os.fspath(summary_dir)
    if not isinstance(summary_dir, str):
        raise TypeError(
            "For 'SummaryCollector', 'summary_dir' must be a str, "
            f"but got {type(summary_dir).__name__} {summary_dir!r}"
        )
    if not summary_dir.strip():
        raise ValueError("For 'SummaryCollector', 'summary_dir' must not be blank")
    path = os.path.realpath(summary_dir)
    if len(path) > MAX_DIR_LENGTH:
        raise ValueError(
            f"For 'SummaryCollector', 'summary_dir' must be at most {MAX_DIR_LENGTH} "
            f"characters as a real path, but got {len(path)}"
        )
    if os.path.exists(path) and not os.path.isdir(path):
        raise NotADirectoryError(f"summary_dir {summary_dir!r} exists and is not a directory")
    return path


def check_landscape(value: object) -> dict[str, Any] | None:
    """The checked landscape settings with defaults filled in; None when disabled."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(
            "For 'SummaryCollector', 'collect_landscape' must be None or a dict, "
            f"but got {type(value).__name__}"
        )
    if not value:  # MindSpore crashes on {}; we treat it as "off"
        return None
    for key in value:
        if key not in LANDSCAPE_KEYS:
            raise ValueError(
                f"For 'SummaryCollector', 'collect_landscape' key {key!r} is not supported; "
                f"allowed: {list(LANDSCAPE_KEYS)}"
            )
    result = {**LANDSCAPE_DEFAULTS, **value}
    size = result["landscape_size"]
    if not _is_int(size):
        raise TypeError(f"'landscape_size' must be an int, but got {type(size).__name__}")
    if not 3 <= size <= 256:
        raise ValueError(f"'landscape_size' must be between 3 and 256, but got {size}")
    unit = result["unit"]
    if not isinstance(unit, str):
        raise TypeError(f"'unit' must be a str, but got {type(unit).__name__}")
    if unit not in ("step", "epoch"):
        raise ValueError(f"'unit' must be 'step' or 'epoch', but got {unit!r}")
    if not _is_int(result["num_samples"]):
        raise TypeError(
            f"'num_samples' must be an int, but got {type(result['num_samples']).__name__}"
        )
    create = result["create_landscape"]
    if not isinstance(create, dict):
        raise TypeError(f"'create_landscape' must be a dict, but got {type(create).__name__}")
    for key, flag in create.items():
        if key not in ("train", "result"):
            raise ValueError(f"'create_landscape' key {key!r} is not one of 'train', 'result'")
        if not isinstance(flag, bool):
            raise TypeError(f"'create_landscape'[{key!r}] must be a bool")
    result["create_landscape"] = {"train": True, "result": True, **create}
    intervals = result.get("intervals")
    if not isinstance(intervals, list) or not all(isinstance(i, list) for i in intervals):
        raise TypeError("'collect_landscape' needs 'intervals', a list of lists of ints")
    for interval in intervals:
        if not all(_is_int(n) for n in interval):
            raise TypeError(f"every element of interval {interval!r} must be an int")
        if len(interval) < 3:
            raise ValueError(f"interval {interval!r} must have at least 3 elements")
    result["intervals"] = [list(i) for i in intervals]
    return result


def process_specified_data(specified: object, keep_default_action: bool) -> dict[str, Any]:
    """The merged ``collect_specified_data`` (spec section 2; absent key = off)."""
    if specified is None:
        return dict(DEFAULT_DATA) if keep_default_action else {}
    if not isinstance(specified, dict):
        raise TypeError(
            "For 'SummaryCollector', 'collect_specified_data' must be None or a dict, "
            f"but got {type(specified).__name__}"
        )
    for key, value in specified.items():
        if not isinstance(key, str):
            raise TypeError(
                f"'collect_specified_data' keys must be str, but got {type(key).__name__} {key!r}"
            )
        if key not in ALLOWED_KEYS:
            raise ValueError(
                f"'collect_specified_data' key {key!r} is not supported; "
                f"allowed: {list(ALLOWED_KEYS)}"
            )
        if key in BOOL_KEYS and not isinstance(value, bool):
            raise TypeError(
                f"'collect_specified_data'[{key!r}] must be a bool, "
                f"but got {type(value).__name__} {value!r}"
            )
        if key == "histogram_regular":
            if value is not None and not isinstance(value, str):
                raise TypeError(
                    "'histogram_regular' must be None or a str (a regular expression), "
                    f"but got {type(value).__name__}"
                )
            if isinstance(value, str):
                try:
                    re.compile(value)
                except re.error as err:
                    raise ValueError(
                        f"'histogram_regular' {value!r} is not a valid regex: {err}"
                    ) from err
    if keep_default_action:
        result = dict(DEFAULT_DATA)
        result.update(specified)
        return result
    return dict(specified)


def check_custom_data(data: object, source: str = "custom_lineage_data") -> dict[str, Any]:
    """A flat ``{str: int | float | str}`` dict (a ``UserDefinedInfo`` gives its data)."""
    if data is None:
        return {}
    inner = getattr(data, "data", None)
    if not isinstance(data, dict) and isinstance(inner, Mapping):  # sumlens.lineage.from_config
        data = dict(inner)
    if not isinstance(data, dict):
        raise TypeError(f"'{source}' must be None or a dict, but got {type(data).__name__}")
    for key, value in data.items():
        if not isinstance(key, str):
            raise TypeError(f"'{source}' keys must be str, but got {type(key).__name__} {key!r}")
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise TypeError(
                f"'{source}'[{key!r}] must be an int, float or str, "
                f"but got {type(value).__name__} {value!r}"
            )
    return dict(data)


def env_custom_data() -> dict[str, Any]:
    """Custom lineage data from ``$MINDINSIGHT_HYPER_CONFIG`` (spec section 8)."""
    text = os.environ.get(HYPER_CONFIG_ENV)
    if text is None:
        return {}
    if len(text) > MAX_ENV_LENGTH:
        logger.warning("%s is longer than %d characters; ignored", HYPER_CONFIG_ENV, MAX_ENV_LENGTH)
        return {}
    try:
        config = json.loads(text)
    except ValueError as err:
        logger.warning("%s is not valid JSON (%s); ignored", HYPER_CONFIG_ENV, err)
        return {}
    if not isinstance(config, dict):
        logger.warning("%s is not a JSON object; ignored", HYPER_CONFIG_ENV)
        return {}
    if "custom_lineage_data" not in config:
        logger.info("%s has no 'custom_lineage_data'; nothing taken from it", HYPER_CONFIG_ENV)
        return {}
    return check_custom_data(
        config["custom_lineage_data"], f"{HYPER_CONFIG_ENV}.custom_lineage_data"
    )


def tensor_range(
    total: int, collect_freq: int, collect_tensor_freq: int | None = None, start: int = 0
) -> range:
    """The steps (or epochs, in sink mode) whose tensor data is written (spec section 5).

    ``total`` is the number of steps (epochs) of the run, ``start`` the count already done
    before it (``initial_epoch``); with ``start=0`` this is MindSpore's algorithm exactly.
    Fixed frequencies stay aligned to multiples of the frequency; the spread-out schedule
    is laid over the run's own steps.
    """
    upper = start + total + 1
    if collect_tensor_freq is not None:
        return range(0, upper, collect_tensor_freq)
    if len(range(0, total + 1, collect_freq)) > TENSOR_STEP_LIMIT:
        freq = total // (TENSOR_STEP_LIMIT - 1)
        if freq > 1:
            return range(start, upper, freq)[:TENSOR_STEP_LIMIT]
        return range(start, upper)[: TENSOR_STEP_LIMIT + 1]
    return range(0, upper, collect_freq)


def collected_steps(
    total: int, collect_freq: int, collect_tensor_freq: int | None = None
) -> tuple[list[int], list[int]]:
    """(tensor steps, other steps) of a non-sink run of ``total`` steps: the first step
    always, then the schedule (for documentation and tests)."""
    window = tensor_range(total, collect_freq, collect_tensor_freq)
    tensors = [1] + [s for s in range(2, total + 1) if s in window]
    others = [1] + [s for s in range(2, total + 1) if s % collect_freq == 0]
    return tensors, others
