"""Finding one kept series of a run and one of its values, for the routes of every plugin.

A name that is not there becomes :class:`~sumlens.board.errors.NotFound` naming it (the
routes answer 404), so each route looks values up the same way.
"""

from __future__ import annotations

import numpy as np

from sumlens.board.data.surface import ReadSurface, Samples
from sumlens.board.errors import NotFound


def pick_series(surface: ReadSurface, run: str, plugin: str, tag: str, rank: int | None) -> Samples:
    """The kept values of ``plugin`` series ``tag`` of ``rank`` (the first rank when None);
    :class:`NotFound` naming the run, tag or rank that is not there."""
    found = surface.samples(run, plugin, tag)
    for samples in found:
        if rank is None or samples.rank == rank:
            return samples
    if not surface.has_run(run):
        raise NotFound(f"run={run!r} is not a run being served")
    if not found:
        raise NotFound(f"run={run!r} has no {plugin} tag={tag!r}")
    ranks = [samples.rank for samples in found]
    raise NotFound(f"run={run!r} has no {plugin} tag={tag!r} with rank={rank}; ranks: {ranks}")


def step_index(samples: Samples, step: int | None) -> int:
    """Where the newest kept value at ``step`` is in ``samples`` (the newest of all when
    None); :class:`NotFound` listing the kept steps when ``step`` is not among them."""
    if step is None:
        return samples.items.size - 1
    hits = np.flatnonzero(samples.items["step"] == step)
    if not hits.size:
        kept = samples.items["step"].tolist()
        raise NotFound(f"step={step} of {samples.tag!r} is not kept; kept steps: {kept}")
    return int(hits[-1])
