"""One column per quantity in the lineage table: the fields one hyper-parameter was
recorded under, folded together.

sumlens' own writers record a hyper-parameter more than once: ``SummaryWriter.add_hparams``
(and the Lightning and Hugging Face adapters built on it) writes TensorBoard's hparams
(``hparam/lr``), the same dict as custom lineage (``custom/lr``) and MindSpore's train
lineage field the name means (``learning_rate``, from the names of
:data:`sumlens._hparam_names.TRAIN_FIELDS`: ``lr``, ``opt``, ``bs``, ``epochs`` ...). Side
by side they were three columns of one quantity.

A quantity is a train lineage field with the hparams and custom fields whose names mean it,
or an hparams field with the custom field of the same name. Its fields are folded in this
order: hparams (in the order of the writer's names: the name the user gave), train
lineage, custom lineage (what a user or ``add_hparams`` added beside it); the folded column
takes the first one's id and name and, in each run, the value of the first field holding
one (hparams keep every digit; the train lineage holds a float32).

A field joins only on the runs' word: some run holds both it and what is folded so far (as
the writers record one value under several names), and every run holding both holds the
same value (equal, or equal once both are rounded to float32). A name alone decides
nothing (``arch`` in one run's custom lineage and ``network`` in another's stay apart), and
a name meaning something else in some run stays a column of its own (it starts another
fold), so no value is ever dropped. Each folded column lists its fields and, per run, which
of them held the value, so the page can say where each value came from.

Only the ``/api/v1`` face folds: MindInsight's own routes (:mod:`sumlens.board.mindinsight`)
answer as MindInsight does.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sumlens._hparam_names import TRAIN_FIELDS
from sumlens.board.query.lineage_values import Value

_MEANS = {alias: field for field, aliases in TRAIN_FIELDS.items() for alias in aliases}
"""A hyper-parameter name (lower case) -> the train lineage field it fills."""
_SOURCE_ORDER = {"hparam": 0, "": 1, "custom": 2}
"""Which fields of a quantity come first, by their id's prefix ("": train lineage)."""
_FLOAT32_MAX = 3.4028234663852886e38


@dataclass(frozen=True, slots=True)
class Folded:
    """A column of the table: ``sources`` (its own id first) folded into one."""

    sources: tuple[str, ...]
    values: list[Value]
    held: list[int] | None
    """Per run, bit ``i`` set when ``sources[i]`` held a value; None for a single field."""

    @property
    def id(self) -> str:
        """The column's id: its first field's."""
        return self.sources[0]


def quantity(name: str) -> str | None:
    """The quantity column ``name`` records (None: one that is never folded)."""
    if name in TRAIN_FIELDS:
        return name
    prefix, _, field = name.partition("/")
    if prefix not in ("hparam", "custom") or not field:
        return None
    return _MEANS.get(field.lower(), f"={field}")


def _order(name: str) -> tuple[int, int, str]:
    """Where field ``name`` comes among the fields of its quantity."""
    prefix, _, field = name.partition("/")
    if not field:  # a train lineage field
        return (_SOURCE_ORDER[""], 0, name)
    means = _MEANS.get(field.lower())
    rank = TRAIN_FIELDS[means].index(field.lower()) if means else 0
    return (_SOURCE_ORDER[prefix], rank, name)


def _float32(value: float) -> float | None:
    """``value`` rounded to float32 (None outside float32's range)."""
    if not math.isfinite(value) or abs(value) > _FLOAT32_MAX:
        return None
    return struct.unpack("f", struct.pack("f", value))[0]


def same(a: Value, b: Value) -> bool:
    """Whether two values of one quantity agree: equal, or numbers equal as float32."""
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        return a == b
    if a == b:
        return True
    rounded = _float32(float(a))
    return rounded is not None and rounded == _float32(float(b))


def _folds(fields: list[str], rows: Sequence[Mapping[str, Value]]) -> list[list[str]]:
    """The fields of one quantity split into folds: fields held together by some run and
    agreeing in every run."""
    pending = sorted(fields, key=_order)
    folds = []
    while pending:
        fold, left = [pending[0]], []
        merged = [row.get(pending[0]) for row in rows]
        for name in pending[1:]:
            column = [row.get(name) for row in rows]
            both = [
                (a, b)
                for a, b in zip(merged, column, strict=True)
                if a is not None and b is not None
            ]
            if both and all(same(a, b) for a, b in both):
                fold.append(name)
                merged = [b if a is None else a for a, b in zip(merged, column, strict=True)]
            else:
                left.append(name)
        folds.append(fold)
        pending = left
    return folds


def fold(names: Iterable[str], rows: Sequence[Mapping[str, Value]]) -> list[Folded]:
    """The columns of fields ``names`` (in the table's order) over ``rows`` (each run's
    values), each quantity's fields folded; a fold stands where its first listed field
    stood."""
    ordered = list(names)
    by_quantity: dict[str, list[str]] = {}
    for name in ordered:
        found = quantity(name)
        if found is not None:
            by_quantity.setdefault(found, []).append(name)
    fold_of: dict[str, list[str]] = {}
    for fields in by_quantity.values():
        if len(fields) > 1:
            for sources in _folds(fields, rows):
                for name in sources:
                    fold_of[name] = sources
    columns = []
    placed: set[str] = set()
    for name in ordered:
        sources = fold_of.get(name, [name])
        if sources[0] in placed:
            continue
        placed.add(sources[0])
        columns.append(_column(tuple(sources), rows))
    return columns


def _column(sources: tuple[str, ...], rows: Sequence[Mapping[str, Value]]) -> Folded:
    if len(sources) == 1:
        return Folded(sources, [row.get(sources[0]) for row in rows], None)
    values: list[Value] = []
    held = []
    for row in rows:
        found = [row.get(name) for name in sources]
        values.append(next((value for value in found if value is not None), None))
        held.append(sum(1 << i for i, value in enumerate(found) if value is not None))
    return Folded(sources, values, held)
