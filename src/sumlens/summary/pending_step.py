"""The pending step: what a ``SummaryRecord`` was given since its last ``record()``.

Values of ``add_value`` (checked items, one per plugin and name), plain scalars
(``add_scalar``, and ``add_value``'s plain numbers: kept as floats by tag) and summary
operators' values (written in train mode only). The same name twice before a record keeps
the newest value, with one warning. :meth:`PendingStep.write` makes them the values of one
step: a step of plain scalars only is a row of the scalar lane (the common case, and the
cheapest); any other is one batch, checked against ``max_file_size`` and protobuf's limit,
as a value written apart from the step is (:meth:`PendingStep.write_alone`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sumlens._log import warn_once
from sumlens.summary.intake import Intake
from sumlens.summary.items import Item, StepBatch
from sumlens.summary.pipeline import WriterPipeline
from sumlens.summary.record_state import RecordState
from sumlens.summary.scalar_lane import ScalarLane
from sumlens.summary.size_bound import SizeBound, submit_alone

Slot = tuple[str, str]
"""A value's place in a step: its plugin and its name."""


class PendingStep:
    """The values of the next ``record(step)`` of one record, and how they are written."""

    def __init__(
        self,
        pipeline: WriterPipeline,
        state: RecordState,
        lane: ScalarLane,
        intake: Intake,
        bound: SizeBound | None,
    ) -> None:
        self.values: dict[Slot, Item] = {}
        """``add_value``'s items (the intake's size budget of a step reads them)."""
        self.operator_values: dict[Slot, Item] = {}
        self._scalars: dict[str, float] = {}
        self._pipeline = pipeline
        self._state = state
        self._lane = lane
        self._intake = intake
        self._bound = bound

    def add(self, item: Item) -> None:
        """Keep a checked item (see :class:`~sumlens.summary.intake.Intake`): a scalar read
        already as a float with the plain scalars."""
        if item.plugin == "scalar" and isinstance(item.value, float):
            self.add_scalar(item.tag, item.value)
        else:
            _keep(self.values, item, "add_value")

    def add_scalar(self, tag: str, value: float) -> None:
        """Keep a plain scalar (a tag :func:`~sumlens.summary.intake.plain_scalar` took, a
        float), unless the record is closed: the hot path of ``add_value``."""
        if not self._state.is_open:
            self._state.say_closed("add_value('scalar', %r)", tag)
            return
        scalars = self._scalars
        if tag in scalars:
            warn_once(
                f"duplicate:add_value:scalar:{tag}",
                "'%s/scalar' was given twice before record(); only the newest value is written",
                tag,
            )
        scalars[tag] = value

    def add_operator_value(self, item: Item) -> None:
        """Keep a summary operator's checked item."""
        _keep(self.operator_values, item, "operator")

    def discard(self) -> None:
        """Drop every value kept."""
        self.values.clear()
        self._scalars.clear()  # a dict handed over with a row is never the current one
        self.operator_values.clear()

    def write(self, step: int, train: bool, plugin_filter: Callable[[str], bool] | None) -> bool:
        """Hand the values over as those of ``step`` (the operators' only when ``train``;
        ``plugin_filter(plugin)`` False drops a plugin's); what ``record()`` returns."""
        wall = time.time()
        scalars = self._scalars
        if plugin_filter is not None and scalars and not plugin_filter("scalar"):
            scalars.clear()
        if not self.values and not (self.operator_values and train):
            self.operator_values.clear()
            if scalars:  # only plain scalars this step: the scalar lane, one row appended
                self._scalars = {}
                return self._lane.put_step(step, wall, scalars)
            return not self._pipeline.failed
        pool, self.values = self.values, {}
        operators, self.operator_values = self.operator_values, {}
        if train:
            pool.update(operators)
        items = [Item("scalar", name, value) for name, value in scalars.items()]
        scalars.clear()
        items += pool.values()
        if plugin_filter is not None:
            items = [item for item in items if plugin_filter(item.plugin)]
        oversize: list[Item] = []
        least = 0
        if self._bound is not None:
            oversize, least = self._bound.items(step, items)
            for item in oversize:  # an exported tensor is still exported (not size-bound)
                item.summary = False
            items = [item for item in items if item.summary or item.export]
        batch = StepBatch(step, wall, items)
        self._intake.check_step_bytes(batch)
        self._pipeline.submit(batch if items else None)
        if self._bound is not None and oversize:
            return self._bound.refuse(step, (f"{o.tag}/{o.plugin}" for o in oversize), least)
        return not self._pipeline.failed

    def write_alone(self, batch: StepBatch) -> bool:
        """Hand over a batch apart from the pending step (``record_value``'s), checked as a
        step is (:func:`~sumlens.summary.size_bound.submit_alone`)."""
        return submit_alone(batch, self._pipeline, self._intake, self._bound)


def _keep(kept: dict[Slot, Item], item: Item, source: str) -> None:
    """Keep ``item`` in its slot, warning once when the slot held a value already."""
    slot = (item.plugin, item.tag)
    if slot in kept:
        warn_once(
            f"duplicate:{source}:{slot}",
            "'%s/%s' was given twice before record(); only the newest value is written",
            item.tag,
            item.plugin,
        )
    kept[slot] = item
