"""A read surface held in memory: runs made up by a test, served without a disk or a server.

:class:`MemorySurface` is a complete :class:`~sumlens.board.data.surface.ReadSurface`
(not a stand-in that answers what one test expects): it keeps scalar points per run, rank
and tag, the kept values of the other plugins (the same :class:`~sumlens.io.Event` values
the loader reads back), a run's files as raw bytes, damage counts and the loading status,
and answers every question of the surface from them under its rules (unknown names are
empty, arrays are snapshots, the version moves on every change, a damaged value raises
:class:`~sumlens.board.errors.ValueUnreadable` and is counted once). Route tests build
one the way TensorBoard tests its server on a ``CommitBuilder``::

    surface = MemorySurface()
    surface.add_scalars("./a", "loss", steps=[1, 2, 3], values=[0.9, 0.5, 0.4])
    surface.add_value("./a", "image", "img", step=3, value=Image(png, 2, 2))
    app = create_app(settings, surface)

It keeps every value it is given (a test says which values are kept; the loader samples
them with :mod:`sumlens.board.data.samples`), and it reads no file: what a file holds is
given as bytes (:meth:`MemorySurface.add_file`) and read back through
:class:`BytesStorage`, the storage seam of :mod:`sumlens.io.storage` over bytes.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sumlens.board.data.samples import SAMPLE
from sumlens.board.data.store import POINT
from sumlens.board.data.surface import (
    BesideFileTooLarge,
    RunFile,
    RunSummary,
    Samples,
    SeriesRef,
    beside_parts,
)
from sumlens.board.errors import ValueUnreadable
from sumlens.board.projector_config import CONFIG_FILE, embedding_tags
from sumlens.board.settings import BoardSettings
from sumlens.io import Event, RecordFile, masked_crc32c
from sumlens.io.naming import file_kind, file_rank
from sumlens.io.storage import FileInfo


class Gone:
    """Stands for a value its file no longer holds: :meth:`MemorySurface.value` answers None
    (as the loader does when a file was replaced since the value was listed)."""


GONE = Gone()
"""The one :class:`Gone` value to pass to :meth:`MemorySurface.add_value`."""


@dataclass(frozen=True, slots=True)
class Damaged:
    """Stands for a value that cannot be read back (``reason`` says why): reading it raises
    :class:`~sumlens.board.errors.ValueUnreadable` and counts it in its run's damage once."""

    reason: str


class BytesStorage:
    """A :class:`~sumlens.io.storage.Storage` over files held as bytes: one flat directory
    whose paths are the files' names (what :meth:`MemorySurface.record_file` reads)."""

    def __init__(self, files: dict[str, tuple[bytes, int]]) -> None:
        self._files = files  # name -> (bytes, mtime_ns)

    def join(self, directory: str, name: str) -> str:
        """The name itself: there is one directory."""
        return name

    def stat(self, path: str) -> FileInfo:
        """The file ``path`` (``FileNotFoundError`` when there is none)."""
        data, mtime_ns = self._get(path)
        return FileInfo(path, False, len(data), mtime_ns, mtime_ns)

    def list_dir(
        self, path: str, keep: Callable[[str], bool] | None = None, dirs: bool = True
    ) -> list[FileInfo]:
        """Every file whose name ``keep`` accepts (there are no sub-directories)."""
        return [self.stat(name) for name in self._files if keep is None or keep(name)]

    def open_read(self, path: str, offset: int = 0, length: int | None = None) -> io.BytesIO:
        """The bytes of ``path`` as a file object, at ``offset`` (all held: ``length`` is
        no hint to take)."""
        handle = io.BytesIO(self._get(path)[0])
        handle.seek(offset)
        return handle

    def _get(self, path: str) -> tuple[bytes, int]:
        found = self._files.get(path)
        if found is None:
            raise FileNotFoundError(2, "no such file held in memory", path)
        return found


@dataclass
class _Run:
    """Everything a :class:`MemorySurface` holds of one run."""

    id: str
    created: float | None = None
    updated: float | None = None
    status: str = "ready"
    error: str | None = None
    several_trainings: bool = False
    restarts: int = 0
    stale_points_dropped: int = 0
    corrupt_records: int = 0
    skipped_bytes: int = 0
    skipped_plugins: dict[str, int] = field(default_factory=dict)
    unreadable_directory: str | None = None
    points: dict[tuple[int | None, str], np.ndarray] = field(default_factory=dict)
    values: dict[tuple[int | None, str, str], list[tuple[int, float, Any]]] = field(
        default_factory=dict
    )
    files: dict[str, tuple[RunFile, bytes]] = field(default_factory=dict)
    damaged: set[tuple[int | None, str, str, int]] = field(default_factory=set)
    beside: dict[tuple[str, ...], bytes] = field(default_factory=dict)

    def seen(self, wall: float) -> None:
        """Take ``wall`` into the run's creation time (the earliest seen)."""
        self.created = wall if self.created is None else min(self.created, wall)

    def summary(self) -> dict[str, Any]:
        """The run as ``/api/v1/runs`` lists it (the loader's shape: :class:`RunSummary`)."""
        found: dict[str, set[str]] = {}
        for (_, plugin, tag), kept in self.values.items():
            if kept:
                found.setdefault(plugin, set()).add(tag)
        config = self.beside.get((CONFIG_FILE,))
        problem = None
        try:
            embeddings = embedding_tags(config) if config is not None else ()
        except ValueError as err:  # as the loader: it lists none, and it is damage
            embeddings, problem = (), str(err)
        if embeddings:
            found["embedding"] = set(embeddings)
        ranks = {rank for rank, _ in self.points} | {rank for rank, _, _ in self.values}
        files = [entry for entry, _ in self.files.values()]
        walls = [float(p["wall"][-1]) for p in self.points.values() if p.size]
        walls += [wall for kept in self.values.values() for _, wall, _ in kept]
        return RunSummary(
            id=self.id,
            created=self.created,
            updated=self.updated if self.updated is not None else max(walls, default=0.0),
            status=self.status,
            error=self.error,
            sampled_tags=found,
            scalar_tags={tag for (_, tag), points in self.points.items() if points.size},
            ranks={rank for rank in ranks if rank is not None},
            points=sum(int(points.size) for points in self.points.values()),
            files=len(files),
            corrupt_records=self.corrupt_records,
            skipped_bytes=self.skipped_bytes,
            unreadable_files=sum(f.unreadable or bool(f.read_error) for f in files),
            damaged_values=len(self.damaged),
            skipped_plugins=self.skipped_plugins,
            unreadable_directory=self.unreadable_directory,
            several_trainings=self.several_trainings,
            restarts=self.restarts,
            stale_points_dropped=self.stale_points_dropped,
            unreadable_projector_config=problem,
        ).as_json()


def _rank_order(rank: int | None) -> int:
    return -1 if rank is None else rank


class MemorySurface:
    """A :class:`~sumlens.board.data.surface.ReadSurface` over runs added by calls.

    ``base_dir``, ``loading``, ``reload_interval``, ``truncated`` and ``engine`` are what
    :meth:`status` says (change them with :meth:`set_status`). Adding to a run that is not
    there yet adds the run. Safe to use from several threads (routes run in a pool).
    """

    def __init__(
        self,
        base_dir: str = "/memory",
        *,
        loading: bool = False,
        reload_interval: float = BoardSettings.reload_interval,
        truncated: bool = False,
        engine: str | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}
        self._version = 0
        self._status: dict[str, Any] = {
            "base_dir": base_dir,
            "loading": loading,
            "reload_interval": reload_interval,
            "truncated": truncated,
            "engine": engine,
            "watching": False,
            "polling_reason": "runs held in memory",
        }

    # ------------------------------------------------------------------ building

    def set_status(
        self,
        *,
        loading: bool | None = None,
        truncated: bool | None = None,
        engine: str | None = None,
    ) -> None:
        """Change what :meth:`status` says of the loading (None: leave as it is)."""
        with self._lock:
            for name, value in (("loading", loading), ("truncated", truncated),
                                ("engine", engine)):  # fmt: skip
                if value is not None:
                    self._status[name] = value
            self._version += 1

    def add_run(
        self,
        run_id: str,
        *,
        created: float | None = None,
        updated: float | None = None,
        status: str = "ready",
        error: str | None = None,
        several_trainings: bool = False,
        restarts: int = 0,
        stale_points_dropped: int = 0,
        corrupt_records: int = 0,
        skipped_bytes: int = 0,
        unreadable_directory: str | None = None,
        skipped_plugins: dict[str, int] | None = None,
    ) -> None:
        """Add run ``run_id`` (or set these facts of it): its times, load ``status`` and
        ``error``, the damage and restarts the run list reports, and the values of kinds
        not shown it counts (``skipped_plugins``, by kind).

        ``created`` defaults to the earliest wall time added, ``updated`` to the latest.
        """
        with self._lock:
            run = self._run(run_id)
            if created is not None:
                run.created = created
            run.updated = updated
            run.status, run.error = status, error
            run.several_trainings = several_trainings
            run.restarts, run.stale_points_dropped = restarts, stale_points_dropped
            run.corrupt_records, run.skipped_bytes = corrupt_records, skipped_bytes
            run.unreadable_directory = unreadable_directory
            run.skipped_plugins = dict(skipped_plugins or {})
            self._version += 1

    def add_scalars(
        self,
        run_id: str,
        tag: str,
        steps: Sequence[int] | np.ndarray,
        values: Sequence[float] | np.ndarray,
        walls: Sequence[float] | np.ndarray | None = None,
        rank: int | None = None,
    ) -> None:
        """Append points to the scalar series ``tag`` of ``rank`` (wall times default to
        the steps, as seconds). Steps must go up, past the series' last step."""
        steps_array = np.asarray(steps, dtype=np.int64)
        values_array = np.asarray(values, dtype=np.float64)
        walls_array = np.asarray(steps if walls is None else walls, dtype=np.float64)
        if not steps_array.size == values_array.size == walls_array.size:
            raise ValueError(
                f"steps, values and walls of {tag!r} have {steps_array.size}, "
                f"{values_array.size} and {walls_array.size} entries: give as many of each"
            )
        points = np.empty(steps_array.size, dtype=POINT)
        points["step"], points["wall"], points["value"] = steps_array, walls_array, values_array
        with self._lock:
            known = self._runs.get(run_id)
            before = None if known is None else known.points.get((rank, tag))
            joined = points if before is None else np.concatenate([before, points])
            if np.any(np.diff(joined["step"]) <= 0):
                last = [] if before is None else before["step"][-1:].tolist()
                raise ValueError(
                    f"steps of {tag!r} (rank {rank}) in run {run_id!r} must go up: got "
                    f"{steps_array.tolist()[:10]} after {last}"
                )
            run = self._run(run_id)
            run.points[rank, tag] = joined
            if points.size:
                run.seen(float(points["wall"].min()))
            self._version += 1

    def add_value(
        self,
        run_id: str,
        plugin: str,
        tag: str,
        step: int,
        value: Any,
        wall: float | None = None,
        rank: int | None = None,
    ) -> None:
        """Keep ``value`` (what :attr:`Event.value <sumlens.io.Event.value>` holds for
        ``plugin``; :data:`GONE` or a :class:`Damaged`) at ``step`` of series ``tag``.

        A step not above the series' last replaces the values from that step on, as a
        resumed run's do. The wall time defaults to the step, as seconds.
        """
        wall = float(step) if wall is None else float(wall)
        with self._lock:
            run = self._run(run_id)
            kept = run.values.setdefault((rank, plugin, tag), [])
            while kept and kept[-1][0] >= step:
                kept.pop()
            kept.append((int(step), wall, value))
            run.seen(wall)
            self._version += 1

    def add_events(self, run_id: str, events: Iterable[Event], rank: int | None = None) -> None:
        """Add ``events`` (as :func:`sumlens.io.iter_events` gives them) to a run: scalars
        as points (see :meth:`add_scalars`), the other plugins' as kept values."""
        for event in events:
            if event.plugin == "scalar":
                walls = [event.wall_time]
                self.add_scalars(run_id, event.tag, [event.step], [event.value], walls, rank)
            else:
                self.add_value(
                    run_id, event.plugin, event.tag, event.step, event.value, event.wall_time, rank
                )

    def add_file(
        self,
        run_id: str,
        name: str,
        data: bytes = b"",
        *,
        kind: str | None = None,
        mtime_ns: int = 0,
        unreadable: bool = False,
        read_error: str = "",
    ) -> None:
        """Give run ``run_id`` a file ``name`` holding ``data`` (its records framed as
        :func:`~sumlens.io.encode_record` frames them), replacing one of that name.

        ``kind`` defaults to what the name says (``summary``, ``lineage``,
        ``tensorboard``), the rank to the one in the name; ``unreadable`` and
        ``read_error`` are counted in the run's damage.
        """
        found_kind = kind or file_kind(name)
        if found_kind is None:
            raise ValueError(f"name={name!r} does not say its kind: give kind=")
        entry = RunFile(name, found_kind, file_rank(name), len(data), mtime_ns, unreadable,
                        read_error)  # fmt: skip
        with self._lock:
            self._run(run_id).files[name] = (entry, bytes(data))
            self._version += 1

    def add_beside_file(self, run_id: str, path: str, data: bytes) -> None:
        """Give run ``run_id`` a file beside its event files at ``path`` (relative to the
        run's directory, e.g. ``projector_config.pbtxt``), replacing one there; a
        projector config lists the run's embeddings."""
        parts = beside_parts(path)
        with self._lock:
            self._run(run_id).beside[parts] = bytes(data)
            self._version += 1

    def _run(self, run_id: str) -> _Run:
        run = self._runs.get(run_id)
        if run is None:
            run = self._runs[run_id] = _Run(run_id)
        return run

    # ------------------------------------------------------------------ ReadSurface

    @property
    def version(self) -> int:
        """Moves on every change (see :class:`~sumlens.board.data.surface.ReadSurface`)."""
        return self._version

    def status(self) -> dict[str, Any]:
        """What the health route and the run list say of the loading."""
        with self._lock:
            return dict(self._status)

    def runs(self) -> list[dict[str, Any]]:
        """Every run's summary, sorted by id."""
        with self._lock:
            return [self._runs[name].summary() for name in sorted(self._runs)]

    def has_run(self, run_id: str) -> bool:
        """Whether ``run_id`` was added."""
        with self._lock:
            return run_id in self._runs

    def series(self, run_id: str) -> list[SeriesRef]:
        """The non-empty scalar series of a run, by rank then tag."""
        with self._lock:
            run = self._runs.get(run_id)
            found = [] if run is None else list(run.points.items())
        refs = [
            SeriesRef(run_id, rank, tag, points.size, float(points["wall"][0]))
            for (rank, tag), points in found
            if points.size
        ]
        return sorted(refs, key=lambda ref: (_rank_order(ref.rank), ref.tag))

    def points(self, ref: SeriesRef) -> np.ndarray:
        """A copy of the series' points now (empty for an unknown series)."""
        with self._lock:
            run = self._runs.get(ref.run)
            points = None if run is None else run.points.get((ref.rank, ref.tag))
            return np.empty(0, dtype=POINT) if points is None else points.copy()

    def samples(self, run_id: str, plugin: str, tag: str) -> list[Samples]:
        """The kept values of a run's ``plugin`` series ``tag``, one entry per rank."""
        with self._lock:
            run = self._runs.get(run_id)
            found = [] if run is None else [
                (rank, list(kept))
                for (rank, kind, name), kept in run.values.items()
                if kind == plugin and name == tag and kept
            ]  # fmt: skip
        listed = []
        for rank, kept in sorted(found, key=lambda entry: _rank_order(entry[0])):
            items = np.zeros(len(kept), dtype=SAMPLE)
            items["pos"] = items["offset"] = np.arange(len(kept))
            items["step"] = [step for step, _, _ in kept]
            items["wall"] = [wall for _, wall, _ in kept]
            listed.append(Samples(run_id, rank, plugin, tag, items))
        return listed

    def value(self, samples: Samples, index: int) -> Event | None:
        """The value kept at ``samples.items[index]`` (None when it is :data:`GONE` or no
        longer kept; :class:`ValueUnreadable` when it is :class:`Damaged`, counted once)."""
        item = samples.items[index]
        step, position = int(item["step"]), int(item["offset"])
        with self._lock:
            run = self._runs.get(samples.run)
            kept = [] if run is None else run.values.get((samples.rank, samples.plugin,
                                                          samples.tag), [])  # fmt: skip
            if run is None or position >= len(kept) or kept[position][0] != step:
                return None
            _, wall, value = kept[position]
            if isinstance(value, Damaged):
                run.damaged.add((samples.rank, samples.plugin, samples.tag, step))
                self._version += 1
        if isinstance(value, Gone):
            return None
        if isinstance(value, Damaged):
            raise ValueUnreadable(
                f"{samples.tag!r} at step {step} of run {samples.run!r} is damaged: {value.reason}"
            )
        return Event(step, wall, samples.plugin, samples.tag, value)

    def files(self, run_id: str) -> list[RunFile]:
        """A run's files, in the order they were added."""
        with self._lock:
            run = self._runs.get(run_id)
            return [] if run is None else [entry for entry, _ in run.files.values()]

    def record_file(self, run_id: str, name: str, offset: int = 0) -> RecordFile | None:
        """The records of a run's file ``name`` from byte ``offset``, read from its bytes
        (as they are now: a file replaced later is not seen by this reader)."""
        with self._lock:
            run = self._runs.get(run_id)
            found = None if run is None else run.files.get(name)
        if found is None:
            return None
        entry, data = found
        return RecordFile(name, offset, storage=BytesStorage({name: (data, entry.mtime_ns)}))

    def payload(self, run_id: str, name: str, offset: int, length: int) -> bytes | None:
        """The payload of the record at ``offset`` of a run's file, checked against its CRC."""
        data = self._data(run_id, name)
        if data is None or offset < 0 or length < 0:
            return None
        payload = data[offset : offset + length]
        crc = data[offset + length : offset + length + 4]
        if len(payload) != length or len(crc) != 4:
            return None
        return payload if masked_crc32c(payload) == int.from_bytes(crc, "little") else None

    def beside_file(self, run_id: str, path: str, limit: int) -> bytes | None:
        """The file added at ``path`` beside a run's event files (None when there is none;
        :class:`BesideFileTooLarge` beyond ``limit`` bytes)."""
        parts = beside_parts(path)
        with self._lock:
            run = self._runs.get(run_id)
            data = None if run is None else run.beside.get(parts)
        if data is not None and len(data) > limit:
            raise BesideFileTooLarge(path, limit)
        return data

    def _data(self, run_id: str, name: str) -> bytes | None:
        with self._lock:
            run = self._runs.get(run_id)
            found = None if run is None else run.files.get(name)
            return None if found is None else found[1]
