"""What the loader knows of each run: its files, its series and its kept samples.

A run's state is everything needed to serve it and to go on reading it where the last
read stopped: per event file how far it was read and what reading met
(:class:`FileState`), per scalar series its ends and where its points lie in the
:class:`~sumlens.board.data.store.SegmentStore` (:class:`SeriesState`), per non-scalar
series the kept samples (:class:`~sumlens.board.data.samples.SampleBucket`), and the run's
counts. Series are keyed by :class:`SeriesKey` (rank, tag) and buckets by
:class:`BucketKey` (rank, plugin, tag); a rank of None is a TensorBoard file's (no rank).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sumlens.board.data.samples import SampleBucket
from sumlens.board.data.store import Chunk
from sumlens.board.data.surface import RunFile, RunSummary


class SeriesKey(NamedTuple):
    """A scalar series of a run."""

    rank: int | None
    tag: str


class BucketKey(NamedTuple):
    """A non-scalar series of a run (its kept samples)."""

    rank: int | None
    plugin: str
    tag: str


class DamagedValue(NamedTuple):
    """A value found damaged when read back: its file, record offset and tag."""

    file: str
    offset: int
    tag: str


@dataclass
class FileState:
    """How far one event file has been read, and what reading it met."""

    name: str
    kind: str
    rank: int | None
    size: int = 0
    mtime_ns: int = 0
    offset: int = 0
    head: str = ""
    records: int = 0
    corrupt_records: int = 0
    skipped_bytes: int = 0
    unreadable: bool = False
    ctime_ns: int = 0
    read_error: str = ""
    """Why the file cannot be read now (after it was read: its permissions changed ...)."""
    skipped_plugins: dict[str, int] = field(default_factory=dict)
    """Values of kinds sumlens does not show, counted by kind (not damage)."""

    def public(self) -> RunFile:
        """The file as the read surface hands it out."""
        return RunFile(
            self.name, self.kind, self.rank, self.size, self.mtime_ns, self.unreadable,
            self.read_error,
        )  # fmt: skip


@dataclass(slots=True)
class SeriesState:
    """One stored series: its ends (steps strictly increase) and where its points lie."""

    rank: int | None
    tag: str
    count: int = 0
    first_step: int = 0
    last_step: int = 0
    first_wall: float = 0.0
    last_wall: float = 0.0
    last_file: str = ""
    chunks: list[Chunk] = field(default_factory=list)


@dataclass
class RunState:
    """Everything the loader knows of one run."""

    id: str
    path: str
    files: dict[str, FileState] = field(default_factory=dict)
    order: dict[int | None, list[str]] = field(default_factory=dict)
    """Each rank's files in the order they were read."""
    series: dict[SeriesKey, SeriesState] = field(default_factory=dict)
    sample_files: list[str] = field(default_factory=list)
    """The files samples point into (:data:`~sumlens.board.data.samples.SAMPLE` ``file``)."""
    created: float | None = None
    updated: float = 0.0
    several_trainings: bool = False
    restarts: int = 0
    stale_points_dropped: int = 0
    status: str = "loading"
    error: str | None = None
    unlisted: str | None = None
    """Why the run's directory cannot be listed now (its data so far stays shown)."""
    damaged_values: list[DamagedValue] = field(default_factory=list)
    """Values found damaged when read back, each counted once."""
    buckets: dict[BucketKey, SampleBucket] = field(default_factory=dict)
    changed_buckets: set[BucketKey] = field(default_factory=set)
    """Buckets changed (or gone) since the state was last saved."""

    def summary(self) -> dict[str, Any]:
        """The run as ``/api/v1/runs`` lists it."""
        found: dict[str, set[str]] = {}
        ranks = {s.rank for s in self.series.values() if s.rank is not None}
        for key, bucket in self.buckets.items():
            if bucket.items.size:
                found.setdefault(key.plugin, set()).add(key.tag)
            if key.rank is not None:
                ranks.add(key.rank)
        files = self.files.values()
        return RunSummary(
            id=self.id,
            created=self.created,
            updated=self.updated,
            status=self.status,
            error=self.error,
            sampled_tags=found,
            scalar_tags={s.tag for s in self.series.values() if s.count},
            ranks=ranks,
            points=sum(s.count for s in self.series.values()),
            files=len(self.files),
            corrupt_records=sum(f.corrupt_records for f in files),
            skipped_bytes=sum(f.skipped_bytes for f in files),
            unreadable_files=sum(f.unreadable or bool(f.read_error) for f in files),
            damaged_values=len(self.damaged_values),
            skipped_plugins=_total(f.skipped_plugins for f in files),
            unreadable_directory=self.unlisted,
            several_trainings=self.several_trainings,
            restarts=self.restarts,
            stale_points_dropped=self.stale_points_dropped,
        ).as_json()


def _total(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    """The counts of each kind, added over ``counts``."""
    total: dict[str, int] = {}
    for each in counts:
        for name, count in each.items():
            total[name] = total.get(name, 0) + count
    return total
