"""The one read surface of the dashboard: what every route, of both faces, reads through.

Routes never open files, list directories or look inside the loader: they ask a
:class:`ReadSurface` for runs, series, points, kept samples, single values and, where
MindInsight's rules must read a job their own way, a run file's raw records. The
polling :class:`~sumlens.board.data.loader.Loader` is the implementation that serves real
base directories; the tests' ``MemorySurface`` (``tests/helpers/memory_surface.py``)
holds made-up runs in memory, so route tests need neither a server nor a disk.

Rules every implementation keeps:

* **Unknown names are empty, not errors**: an unknown run has no series, samples or files;
  the routes turn emptiness into 404s that name what is missing.
* **Arrays are snapshots**: :meth:`ReadSurface.points` and :attr:`Samples.items` are
  copies (or read-only views) the caller may keep while loading goes on.
* **``version`` moves whenever anything a route shows changed**, so responses can be
  cached per version (the run list is).
* A value that cannot be read back raises :class:`~sumlens.board.errors.ValueUnreadable`
  (damage, counted); one its file no longer holds is ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from sumlens.io import Event, RecordFile


class BesideFileTooLarge(ValueError):
    """A file beside a run's event files holds more bytes than the reader allows."""

    def __init__(self, path: str, limit: int) -> None:
        super().__init__(f"{path!r} holds more than {limit:,} bytes, the most read of it")
        self.path, self.limit = path, limit


def beside_parts(path: str) -> tuple[str, ...]:
    """The names of ``path``, a file's path relative to a run's directory (``/`` or ``\\``
    between names, as writers on any system write them); ``ValueError`` when it is empty,
    absolute or would leave the directory (``..``)."""
    parts = tuple(part for part in path.replace("\\", "/").split("/") if part not in ("", "."))
    if not parts or path.startswith(("/", "\\")) or ":" in parts[0] or "\0" in path:
        raise ValueError(f"path={path!r} is not a relative path inside the run's directory")
    if ".." in parts:
        raise ValueError(f"path={path!r} leaves the run's directory ('..' is refused)")
    return parts


@dataclass(frozen=True, slots=True)
class SeriesRef:
    """A scalar series as queries see it: which run, rank and tag, and how many points."""

    run: str
    rank: int | None
    tag: str
    count: int
    first_wall: float


@dataclass(frozen=True, slots=True)
class Samples:
    """The kept values of one non-scalar series (see :mod:`sumlens.board.data.samples`):
    ``items`` holds each kept value's step, wall time and where its record lies.

    ``recorded`` lists where every recorded step's record lies
    (:data:`~sumlens.board.data.samples.RECORD` rows, every ``stride``-th step once the
    index is thinned out), for a page that asks for a step outside the sample; None where
    the surface keeps no such index (then only kept steps are served)."""

    run: str
    rank: int | None
    plugin: str
    tag: str
    items: np.ndarray
    recorded: np.ndarray | None = None
    stride: int = 1


@dataclass(frozen=True, slots=True)
class RunFile:
    """One file of a run as last read: its name in the run's directory, its kind
    (``summary``, ``lineage``, ``tensorboard`` ...), rank, size and what reading it met."""

    name: str
    kind: str
    rank: int | None
    size: int
    mtime_ns: int
    unreadable: bool
    read_error: str


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What the run list says of one run; :meth:`as_json` is its ``/api/v1/runs`` entry,
    the same shape whichever surface made it."""

    id: str
    created: float | None
    updated: float | None
    status: str
    error: str | None
    sampled_tags: dict[str, set[str]]
    """The tags of each non-scalar plugin that has kept values."""
    scalar_tags: set[str]
    ranks: set[int]
    points: int
    files: int
    corrupt_records: int
    skipped_bytes: int
    unreadable_files: int
    damaged_values: int
    skipped_plugins: dict[str, int]
    """Values of kinds sumlens does not show (TensorBoard's mesh ...), counted by kind."""
    unreadable_directory: str | None
    several_trainings: bool
    restarts: int
    stale_points_dropped: int
    unreadable_projector_config: str | None = None
    """Why the run's ``projector_config.pbtxt`` lists no embedding (None: it reads, or
    there is none)."""

    def as_json(self) -> dict[str, Any]:
        """The run list's entry: tags sorted per plugin (scalars last), ranks sorted."""
        tags = {plugin: sorted(names) for plugin, names in self.sampled_tags.items()}
        if self.scalar_tags:
            tags["scalar"] = sorted(self.scalar_tags)
        return {
            "id": self.id,
            "created": self.created,
            "updated": self.updated,
            "status": self.status,
            "error": self.error,
            "tags": tags,
            "ranks": sorted(self.ranks),
            "points": self.points,
            "files": self.files,
            "damage": {
                "corrupt_records": self.corrupt_records,
                "skipped_bytes": self.skipped_bytes,
                "unreadable_files": self.unreadable_files,
                "damaged_values": self.damaged_values,
                "unreadable_directory": self.unreadable_directory,
                "unreadable_projector_config": self.unreadable_projector_config,
            },
            "skipped": dict(sorted(self.skipped_plugins.items())),
            "several_trainings": self.several_trainings,
            "restarts": self.restarts,
            "stale_points_dropped": self.stale_points_dropped,
        }


@runtime_checkable
class ReadSurface(Protocol):
    """Everything the routes read (see the module docstring for the rules)."""

    @property
    def version(self) -> int:
        """A number that changes whenever anything a route shows changed."""
        ...

    def status(self) -> dict[str, Any]:
        """What ``/api/v1/health`` and the run list say of the loading itself:
        ``base_dir``, ``loading``, ``reload_interval``, ``truncated``, ``engine``,
        ``watching`` (whether changes are watched rather than walked for) and
        ``polling_reason`` (why not, None while watching)."""
        ...

    def runs(self) -> list[dict[str, Any]]:
        """Every run's summary as ``/api/v1/runs`` lists it, sorted by id."""
        ...

    def has_run(self, run_id: str) -> bool:
        """Whether ``run_id`` names a run being served."""
        ...

    def series(self, run_id: str) -> list[SeriesRef]:
        """The non-empty scalar series of a run, by rank then tag."""
        ...

    def points(self, ref: SeriesRef) -> np.ndarray:
        """The points of a series now (:data:`~sumlens.board.data.store.POINT` records)."""
        ...

    def samples(self, run_id: str, plugin: str, tag: str) -> list[Samples]:
        """The kept values of a run's ``plugin`` series named ``tag``, one entry per rank."""
        ...

    def value(self, samples: Samples, index: int) -> Event | None:
        """The value of ``samples.items[index]``; None when its file no longer holds it."""
        ...

    def files(self, run_id: str) -> list[RunFile]:
        """A run's files as last read, in reading order per rank."""
        ...

    def record_file(self, run_id: str, name: str, offset: int = 0) -> RecordFile | None:
        """The raw records of one of a run's files from byte ``offset`` (None when the run
        has no such file), for readers with rules of their own (MindInsight's, lineage)."""
        ...

    def payload(self, run_id: str, name: str, offset: int, length: int) -> bytes | None:
        """The payload of the record at ``offset`` of a run's file, checked against its
        CRC; None when the file no longer holds that record or cannot be read."""
        ...

    def beside_file(self, run_id: str, path: str, limit: int) -> bytes | None:
        """A file beside a run's event files (the embedding projector's), by its ``path``
        relative to the run's directory (checked by :func:`beside_parts`: ``ValueError``
        when it would leave it, by its names or, on a local disk, through a symbolic link);
        None when the run or the file is not there;
        :class:`BesideFileTooLarge` when it holds more than ``limit`` bytes; ``OSError``
        when it cannot be read."""
        ...


@runtime_checkable
class Polling(Protocol):
    """A surface that loads in the background (the :class:`~sumlens.board.data.loader.Loader`):
    the application starts and stops it with itself, and work that should wait for the
    first pass (warming the lineage table) waits on it. An in-memory surface has none of it."""

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        ...

    def start(self) -> None:
        """Begin loading in the background."""
        ...

    def stop(self) -> None:
        """Stop loading and release what loading holds."""
        ...

    def wait_for_pass(self, passes: int = 1, timeout: float = 60.0) -> bool:
        """Wait until ``passes`` loading passes are done; False when ``timeout`` ran out."""
        ...
