"""Argument checks and the tensor-step schedule of :class:`sumlens.SummaryCollector`.

Kept apart from the callback so that its rules can be read and unit-tested on their own.
The checks of the loss-landscape settings belong to :mod:`sumlens._landscape_settings`,
shared with the landscape that reads what the collector saves; custom lineage data is
checked by :func:`sumlens.lineage.builders.check_custom_lineage`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from sumlens._checks import check_bool, check_directory
from sumlens._log import logger
from sumlens.io.remote import is_url
from sumlens.lineage.builders import check_custom_lineage

OWNER = "SummaryCollector"
"""The name argument errors give as the function the user called."""
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
    "collect_landscape": None,  # off by default: it saves many weight files
}
"""What is collected without ``collect_specified_data`` (``keep_default_action=True``).

MindSpore collects landscape weights by default (intervals ``[[1..9], [10..19]]``, 19
weight files in ``ckpt_dir``); here that is off until asked for.
"""


def check_summary_dir(summary_dir: object) -> str:
    """The real path of ``summary_dir`` (not created here); a URL of object storage as it
    is (its record checks it with the store)."""
    if isinstance(summary_dir, str) and is_url(summary_dir):
        return summary_dir
    return check_directory(summary_dir, "summary_dir", OWNER, MAX_DIR_LENGTH)


def process_specified_data(specified: object, keep_default_action: bool) -> dict[str, Any]:
    """The merged ``collect_specified_data``: what the collector collects.

    None gives :data:`DEFAULT_DATA` with ``keep_default_action``, else nothing. A dict
    takes only :data:`ALLOWED_KEYS`; with ``keep_default_action`` it updates the defaults
    (shallowly: a ``collect_landscape`` dict replaces the default one), else it is all
    there is. A key that is absent means off; ``histogram_regular`` present as None means
    the first five parameters. The landscape settings are checked apart
    (:func:`sumlens._landscape_settings.check_collect_landscape`).
    """
    if specified is None:
        return dict(DEFAULT_DATA) if keep_default_action else {}
    if not isinstance(specified, dict):
        raise TypeError(
            f"For '{OWNER}', the argument 'collect_specified_data' must be None or a dict, "
            f"but got {type(specified).__name__}"
        )
    checked = {}
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
        if key in BOOL_KEYS:
            value = check_bool(value, f"collect_specified_data[{key!r}]", OWNER)
        elif key == "histogram_regular":
            _check_regex(value)
        checked[key] = value
    return {**DEFAULT_DATA, **checked} if keep_default_action else checked


def _check_regex(value: object) -> None:
    """``histogram_regular``: None or a regular expression that compiles."""
    if value is not None and not isinstance(value, str):
        raise TypeError(
            "'histogram_regular' must be None or a str (a regular expression), "
            f"but got {type(value).__name__}"
        )
    if isinstance(value, str):
        try:
            re.compile(value)
        except re.error as err:
            raise ValueError(f"'histogram_regular' {value!r} is not a valid regex: {err}") from err


def check_custom_data(data: object, source: str = "custom_lineage_data") -> dict[str, Any]:
    """A flat ``{str: int | float | str}`` dict (None: empty; a ``UserDefinedInfo``, as
    :func:`sumlens.lineage.from_config` returns, gives its data)."""
    if data is None:
        return {}
    inner = getattr(data, "data", None)
    if not isinstance(data, Mapping) and isinstance(inner, Mapping):
        data = inner
    return check_custom_lineage(data, repr(source))


def env_custom_data() -> dict[str, Any]:
    """Custom lineage data from ``$MINDINSIGHT_HYPER_CONFIG``, as MindSpore reads it.

    The variable holds a JSON object whose ``custom_lineage_data`` is merged under the
    user's (the user's keys win). Unset, longer than :data:`MAX_ENV_LENGTH`, not JSON
    or not an object: nothing (with a warning for the last three; MindSpore crashes on a
    JSON value that is not an object). Values of the wrong type raise ``TypeError`` as
    the user's do.
    """
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
    """The steps (or epochs, in sink mode) whose tensor data is written.

    ``total`` is the number of steps (epochs) of the run, ``start`` the count already done
    before it (``initial_epoch``); with ``start=0`` this is MindSpore's algorithm exactly:
    every ``collect_tensor_freq``-th step when it is given; else every ``collect_freq``-th
    step when that makes at most :data:`TENSOR_STEP_LIMIT` of them, and otherwise
    :data:`TENSOR_STEP_LIMIT` steps spread over the run (``total // 19`` apart; steps 1
    to 20 when that is 1). The first step of a run is always collected besides.
    Examples: 600 steps, ``collect_freq=10``: tensors at 1, 31, 62, ... 589 (20 steps),
    the rest at 1, 10, ... 600; ``collect_tensor_freq=200``: 1, 200, 400, 600. Fixed
    frequencies stay aligned to multiples of the frequency; the spread-out schedule is
    laid over the run's own steps (MindSpore's never reaches steps beyond ``total``
    after an ``initial_epoch``).
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
