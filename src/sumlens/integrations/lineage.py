"""Lineage as the framework adapters write it: through a writer's ``summary_record``.

Lineage values (:mod:`sumlens.lineage`) are not among ``SummaryWriter``'s ``add_*``
methods; the adapters add them to the writer's underlying ``SummaryRecord`` and record
them at a step. Framework configs nest lists of dicts (a Keras model's layers), which
:func:`indexed` turns into dicts so that each setting becomes a key of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sumlens._log import logger
from sumlens.lineage import LineageBuilder
from sumlens.writer import SummaryWriter


def record_lineage(writer: SummaryWriter, step: int, *values: LineageBuilder) -> None:
    """Write ``values`` (one of each lineage plugin at most) at ``step``.

    Lineage must never stop training: a value the writer refuses is logged as a warning,
    naming it, and left out.
    """
    record = writer.summary_record
    for value in values:
        try:
            record.add_value(value.plugin, value.plugin, value)
        except (TypeError, ValueError) as err:
            logger.warning("the %s lineage could not be recorded: %s", value.plugin, err)
    record.record(step)


def indexed(value: Any) -> Any:
    """``value`` with every list or tuple that holds a dict turned into ``{"0": ..., ...}``,
    at any depth; other lists stay as they are (``from_config`` writes them as text)."""
    if isinstance(value, Mapping):
        return {key: indexed(item) for key, item in value.items()}
    if isinstance(value, list | tuple) and any(isinstance(item, Mapping) for item in value):
        return {str(i): indexed(item) for i, item in enumerate(value)}
    return value
