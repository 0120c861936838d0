"""One kept value of a series, for the routes that serve kept values (of a given type:
:func:`kept_value`).

A value its file no longer holds, or one of another type than the route serves, becomes
:class:`~sumlens.board.errors.NotFound` naming it; a damaged one raises
:class:`~sumlens.board.errors.ValueUnreadable` from the read surface (both name the tag).
"""

from __future__ import annotations

from typing import Any, TypeVar

from sumlens.board.data.surface import ReadSurface, Samples
from sumlens.board.errors import NotFound

T = TypeVar("T")


def value_at(surface: ReadSurface, samples: Samples, index: int) -> Any:
    """The value kept at ``index`` of ``samples``, whatever its type."""
    event = surface.value(samples, index)
    if event is None:
        step = int(samples.items["step"][index])
        raise NotFound(
            f"{samples.tag!r} at step {step} is no longer in its file: the file changed since "
            "it was listed"
        )
    return event.value


def kept_value(surface: ReadSurface, samples: Samples, index: int, kind: type[T]) -> T:
    """The value kept at ``index`` of ``samples``, which must be a ``kind``."""
    value = value_at(surface, samples, index)
    if not isinstance(value, kind):
        step = int(samples.items["step"][index])
        raise NotFound(f"{samples.tag!r} at step {step} holds no {samples.plugin} value")
    return value
