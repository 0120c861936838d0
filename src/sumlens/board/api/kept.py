"""One kept value of a series, of the type a route serves, for the text and audio routes.

A value its file no longer holds, or one of another type than the route serves, becomes
:class:`~sumlens.board.errors.NotFound` naming it; a damaged one raises
:class:`~sumlens.board.errors.ValueUnreadable` from the read surface (both name the tag).
"""

from __future__ import annotations

from typing import TypeVar

from sumlens.board.data.surface import ReadSurface, Samples
from sumlens.board.errors import NotFound

T = TypeVar("T")


def kept_value(surface: ReadSurface, samples: Samples, index: int, kind: type[T]) -> T:
    """The value kept at ``index`` of ``samples``, which must be a ``kind``."""
    event = surface.value(samples, index)
    step = int(samples.items["step"][index])
    if event is None:
        raise NotFound(
            f"{samples.tag!r} at step {step} is no longer in its file: the file changed since "
            "it was listed"
        )
    if not isinstance(event.value, kind):
        raise NotFound(f"{samples.tag!r} at step {step} holds no {samples.plugin} value")
    return event.value
