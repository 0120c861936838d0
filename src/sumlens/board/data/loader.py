"""The dashboard's loader: follows every run under a base directory while the server runs.

Each poll walks the base directory (:mod:`sumlens.board.data.discover`), and reads every event
file from the byte offset where the last read stopped (:func:`sumlens.io.read_file_scalars`),
so new points appear while training runs and a torn last record is read once complete.
Points go to the on-disk :class:`~sumlens.board.data.store.ColumnStore`; memory holds only each
series' length and ends, whatever the base directory holds.

Rules, per run:

* **Ranks stay apart.** A run's files are grouped by the rank in their names; each rank
  has its own series (TensorBoard files carry no rank: one group).
* **Files of one rank are read in order** (rotated files continue one another). If a file
  read before shrank, was replaced or vanished, or a new file sorts before one already
  read, the rank's series are rebuilt from the start.
* **Steps going back drop what follows** (as TensorBoard's "preemption"): a point whose step
  is not above the series' last step removes the points at and after that step, so a run
  resumed from a checkpoint shows one line. A later file that starts at or before where an
  earlier file started marks the run as holding *several trainings* (MindSpore's docs ask
  for one training per directory; MindInsight overlays them silently).
* **A step written again with the same value is not a restart**: MindSpore writes each
  epoch's last step twice; the repeat is left out and nothing is counted. Written again
  with another value, it replaces the first (counted, as a resumed run's points are).
* **Damage is counted, never fatal**: corrupt records (values whose shape, counts or sizes
  no value has included), resynchronised bytes, files with no record or that cannot be
  read, values found damaged when read back, and a run directory that cannot be listed
  are counted per run and shown; an unexpected error marks the run, not the server.

Reading uses the numba engine once its kernels are loaded; until then (a fresh install
compiles them for ~20 s in a child process) the python engine reads, with the same
results, so the first start serves at once.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from sumlens._log import warn_once
from sumlens.board.data.discover import Discovery, FoundFile, FoundRun, discover
from sumlens.board.data.samples import SAMPLE, SampleBucket, same_value
from sumlens.board.data.store import POINT, ColumnStore, series_key
from sumlens.board.errors import ValueUnreadable
from sumlens.board.settings import DEFAULT_CAPS
from sumlens.io import (
    Event,
    NotAnEventFileError,
    ReadStats,
    RecordChangedError,
    RecordFile,
    fast_engine_cached,
    fast_engine_ready,
    masked_crc32c,
    read_events_at,
    read_file_scalars,
)
from sumlens.io.decode import PayloadError
from sumlens.io.naming import file_rank
from sumlens.io.scalars import OtherEvents

_log = logging.getLogger("sumlens.board")

Engine = Literal["auto", "numba", "python"]
READ_LIMIT = 64 * 1024 * 1024
"""Bytes of one file read per call: bounds the memory a huge file needs while it loads."""
SMALL_READ = 4 * 1024 * 1024
"""Unread bytes the python engine takes on while the numba kernels are still loading."""
KERNEL_WAIT = 5.0
"""Seconds a large read waits for cached numba kernels to load before reading in Python."""
SAVE_EVERY = 5.0
"""Seconds between state saves while a long first pass goes on."""
HEAD_BYTES = 64
"""Leading bytes of a file remembered to tell a grown file from a replaced one."""


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


@dataclass
class SeriesState:
    """One stored series: where its file is and its ends (steps strictly increase)."""

    rank: int | None
    tag: str
    key: str
    count: int = 0
    first_step: int = 0
    last_step: int = 0
    first_wall: float = 0.0
    last_wall: float = 0.0
    last_file: str = ""


@dataclass
class RunState:
    """Everything the loader knows of one run."""

    id: str
    path: str
    files: dict[str, FileState] = field(default_factory=dict)
    order: dict[str, list[str]] = field(default_factory=dict)
    series: dict[str, SeriesState] = field(default_factory=dict)
    sample_files: list[str] = field(default_factory=list)
    created: float | None = None
    updated: float = 0.0
    several_trainings: bool = False
    restarts: int = 0
    stale_points_dropped: int = 0
    status: str = "loading"
    error: str | None = None
    unlisted: str | None = None
    """Why the run's directory cannot be listed now (its data so far stays shown)."""
    damaged_values: list[str] = field(default_factory=list)
    """Values found damaged when read back (``file\0offset\0tag``), each counted once."""
    # sample buckets of the other plugins, saved apart (see ColumnStore.save_states)
    buckets: dict[str, SampleBucket] = field(default_factory=dict)
    changed_buckets: set[str] = field(default_factory=set)

    def to_dict(self) -> dict[str, Any]:
        """The state as plain JSON-able data (what the store saves; buckets apart)."""
        data = {k: v for k, v in vars(self).items() if k not in ("buckets", "changed_buckets")}
        data["files"] = {name: dict(vars(f)) for name, f in self.files.items()}
        data["series"] = {name: dict(vars(s)) for name, s in self.series.items()}
        data["order"] = {group: list(names) for group, names in self.order.items()}
        data["sample_files"] = list(self.sample_files)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunState:
        """The inverse of :meth:`to_dict`."""
        run = cls(**{k: v for k, v in data.items() if k not in ("files", "series")})
        run.files = {name: FileState(**f) for name, f in data["files"].items()}
        run.series = {name: SeriesState(**s) for name, s in data["series"].items()}
        return run

    def summary(self) -> dict[str, Any]:
        """The run as ``/api/v1/runs`` lists it."""
        found: dict[str, set[str]] = {}
        for key, bucket in self.buckets.items():
            if bucket.items.size:
                _, plugin, tag = key.split("\0", 2)
                found.setdefault(plugin, set()).add(tag)
        tags = {plugin: sorted(names) for plugin, names in found.items()}
        scalar_tags = sorted({s.tag for s in self.series.values() if s.count})
        if scalar_tags:
            tags["scalar"] = scalar_tags
        ranks = {s.rank for s in self.series.values() if s.rank is not None}
        ranks.update(int(key.split("\0", 1)[0]) for key in self.buckets if key[0] != "-")
        return {
            "id": self.id,
            "created": self.created,
            "updated": self.updated,
            "status": self.status,
            "error": self.error,
            "tags": tags,
            "ranks": sorted(ranks),
            "points": sum(s.count for s in self.series.values()),
            "files": len(self.files),
            "damage": {
                "corrupt_records": sum(f.corrupt_records for f in self.files.values()),
                "skipped_bytes": sum(f.skipped_bytes for f in self.files.values()),
                "unreadable_files": sum(
                    f.unreadable or bool(f.read_error) for f in self.files.values()
                ),
                "damaged_values": len(self.damaged_values),
                "unreadable_directory": self.unlisted,
            },
            "several_trainings": self.several_trainings,
            "restarts": self.restarts,
            "stale_points_dropped": self.stale_points_dropped,
        }


def _unlisted_reason(run_id: str, found: Discovery) -> str | None:
    """Why the directory of ``run_id`` (or one above it) could not be listed, or None."""
    for name, reason in found.unlisted.items():
        if run_id == name or run_id.startswith(name.rstrip("/") + "/"):
            return reason
    return None


def _group(rank: int | None) -> str:
    return "-" if rank is None else str(rank)


def _series_name(rank: int | None, tag: str) -> str:
    return f"{_group(rank)}\0{tag}"


def _bucket_name(rank: int | None, plugin: str, tag: str) -> str:
    return f"{_group(rank)}\0{plugin}\0{tag}"


def _unchanged_rewrite(
    before: tuple[Path, str, dict[str, Any]],
    now: tuple[Path, str],
    event: Event,
    offset: int,
    length: int,
) -> bool:
    """Whether ``event`` (its record at ``offset``, ``length`` of file ``now``: path, kind)
    holds the same value as the kept one ``before`` (its file's path, kind and sample row)
    at the same step. Both are read back and compared; what cannot be read is not equal."""
    path, kind, row = before
    try:
        old = read_events_at(path, kind, row["offset"], row["length"], event.tag)
        new = read_events_at(now[0], now[1], offset, length, event.tag)
    except (OSError, PayloadError):
        return False
    olds = [e.value for e in old if e.plugin == event.plugin]
    news = [e.value for e in new if e.plugin == event.plugin]
    return len(olds) == len(news) == 1 and same_value(olds[0], news[0])


def _seen(state: FileState, file: FoundFile) -> None:
    """Remember the size and times the walk saw ``file`` with, once it was dealt with."""
    state.size, state.mtime_ns, state.ctime_ns = file.size, file.mtime_ns, file.ctime_ns


def _head(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha1(handle.read(HEAD_BYTES)).hexdigest()


@dataclass(frozen=True, slots=True)
class SeriesRef:
    """A series as queries see it: which run, rank and tag, and how many points."""

    run: str
    rank: int | None
    tag: str
    key: str
    count: int
    first_wall: float


@dataclass(frozen=True, slots=True)
class Samples:
    """The kept values of one non-scalar series (see :mod:`sumlens.board.data.samples`)."""

    run: str
    rank: int | None
    plugin: str
    tag: str
    items: np.ndarray


class Loader:
    """Follows the runs of ``base_dir`` into a :class:`ColumnStore` kept in ``workspace``.

    ``caps`` sets how many values of each non-scalar plugin a series keeps (defaults:
    :data:`~sumlens.board.data.samples.DEFAULT_CAPS`).
    """

    def __init__(
        self,
        base_dir: Path,
        workspace: Path,
        reload_interval: float = 3.0,
        engine: Engine = "auto",
        caps: dict[str, int] | None = None,
    ) -> None:
        self.base_dir = Path(base_dir)
        self.reload_interval = reload_interval
        self.engine_choice = engine
        self.caps = {**DEFAULT_CAPS, **(caps or {})}
        self.store = ColumnStore(Path(workspace), self.base_dir)
        self.version = 0
        self.loading = True
        self.truncated = False
        self.engine_used: str | None = None
        self.passes = 0
        self._runs: dict[str, RunState] = {}
        self._dirty: set[str] = set()
        self._gone: set[str] = set()
        self._lock = threading.RLock()  # runs table, and series files while they change
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pass_done = threading.Condition(self._lock)
        self._restored = False

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Poll in a background thread every ``reload_interval`` seconds."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sumlens-loader", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop polling, save the state and release the cache directory."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        with self._lock:
            self._save()
            self.store.close()

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called: the loader reads no more."""
        return self._stop.is_set()

    def wait_for_pass(self, passes: int = 1, timeout: float = 60.0) -> bool:
        """Wait until ``passes`` polls have completed since the loader was made."""
        deadline = time.monotonic() + timeout
        with self._pass_done:
            while self.passes < passes:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._pass_done.wait(left)
        return True

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll()
            except Exception:  # the server keeps serving what it has
                _log.exception("the loader's poll failed; retrying in %.1f s", self.reload_interval)
            self._stop.wait(self.reload_interval)

    # ------------------------------------------------------------------ queries

    def runs(self) -> list[dict[str, Any]]:
        """Every run's summary (see :meth:`RunState.summary`), sorted by id."""
        with self._lock:
            return [self._runs[name].summary() for name in sorted(self._runs)]

    def has_run(self, run_id: str) -> bool:
        """Whether ``run_id`` names a run being served."""
        with self._lock:
            return run_id in self._runs

    def series(self, run_id: str) -> list[SeriesRef]:
        """The scalar series of a run (empty for an unknown run), by rank then tag."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return []
            refs = [
                SeriesRef(run_id, s.rank, s.tag, s.key, s.count, s.first_wall)
                for s in run.series.values()
                if s.count
            ]
        return sorted(refs, key=lambda r: (-1 if r.rank is None else r.rank, r.tag))

    def points(self, ref: SeriesRef) -> np.ndarray:
        """The points of a series (:data:`~sumlens.board.data.store.POINT` records), as now."""
        with self._lock:
            run = self._runs.get(ref.run)
            state = run.series.get(_series_name(ref.rank, ref.tag)) if run else None
            if state is None or state.count == 0:
                return np.empty(0, dtype=POINT)
            return self.store.read(state.key, state.count)

    def run_path(self, run_id: str) -> Path | None:
        """The directory of a run being served (None for an unknown run)."""
        with self._lock:
            run = self._runs.get(run_id)
            return None if run is None else Path(run.path)

    def status(self) -> dict[str, Any]:
        """The loading itself, as the health route and the run list say it."""
        return {
            "base_dir": os.fspath(self.base_dir),
            "loading": self.loading,
            "reload_interval": self.reload_interval,
            "truncated": self.truncated,
            "engine": self.engine_used,
        }

    def record_file(self, run_id: str, name: str, offset: int = 0) -> RecordFile | None:
        """The raw records of file ``name`` of a run from byte ``offset`` (None when the
        run has no such file): for readers with rules of their own (MindInsight's)."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None or name not in run.files:
                return None
            return RecordFile(Path(run.path) / name, offset)

    def payload(self, run_id: str, name: str, offset: int, length: int) -> bytes | None:
        """The payload of the record at ``offset`` of a run's file, checked against its
        CRC; None when the file no longer holds that record or cannot be read."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None or name not in run.files:
                return None
            path = Path(run.path) / name
        try:
            with open(path, "rb") as handle:
                handle.seek(offset)
                payload = handle.read(length)
                crc = handle.read(4)
        except OSError:
            return None
        if len(payload) != length or masked_crc32c(payload) != int.from_bytes(crc, "little"):
            return None
        return payload

    def files(self, run_id: str) -> list[FileState]:
        """The event files of a run as last read (copies), in reading order per rank."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return []
            return [FileState(**vars(state)) for state in run.files.values()]

    def samples(self, run_id: str, plugin: str, tag: str) -> list[Samples]:
        """The kept values of a run's ``plugin`` series named ``tag``, one entry per rank."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return []
            found = [
                Samples(run_id, None if group == "-" else int(group), plugin, tag, bucket.items)
                for key, bucket in run.buckets.items()
                for group, kind, name in [key.split("\0", 2)]
                if kind == plugin and name == tag and bucket.items.size
            ]
        return sorted(found, key=lambda s: -1 if s.rank is None else s.rank)

    def value(self, samples: Samples, index: int) -> Event | None:
        """The value of ``samples.items[index]``, read back from its event file.

        None when the file no longer holds it (replaced or removed since it was listed).
        Raises :class:`ValueUnreadable` when the value is damaged (indexing checks what it
        can without converting values; the rest is found here) or its file cannot be
        read: either is counted in the run's damage and said once in the log.
        """
        item = samples.items[index]
        with self._lock:
            run = self._runs.get(samples.run)
            if run is None or not 0 <= int(item["file"]) < len(run.sample_files):
                return None
            name = run.sample_files[int(item["file"])]
            state = run.files.get(name)
            path = Path(run.path) / name
        if state is None:
            return None
        what = f"{samples.tag!r} at step {int(item['step'])} of run {samples.run!r}"
        try:
            events = read_events_at(
                path, state.kind, int(item["offset"]), int(item["length"]), samples.tag
            )
        except (FileNotFoundError, RecordChangedError):
            return None
        except OSError as err:
            reason = err.strerror or str(err)
            self._note_read_error(run, state, path, reason)
            raise ValueUnreadable(f"{what}: its file {name!r} cannot be read ({reason})") from None
        except PayloadError as err:
            self._note_damaged_value(run, f"{name}\0{int(item['offset'])}\0{samples.tag}", what)
            raise ValueUnreadable(f"{what} is damaged in its file {name!r}: {err}") from None
        if state.read_error:
            self._note_read_error(run, state, path, "")
        for event in events:
            if event.plugin == samples.plugin and event.tag == samples.tag:
                return event
        return None

    def _note_read_error(self, run: RunState, state: FileState, path: Path, reason: str) -> None:
        """Record that a file read before cannot be read now (``reason``), or can again ("")."""
        with self._lock:
            if state.read_error == reason:
                return
            state.read_error = reason
            self._dirty.add(run.id)
            self.version += 1
        if reason:
            warn_once(f"read_error:{path}", "cannot read %s: %s", path, reason)

    def _note_damaged_value(self, run: RunState, key: str, what: str) -> None:
        with self._lock:
            if key in run.damaged_values:
                return
            run.damaged_values.append(key)
            self._dirty.add(run.id)
            self.version += 1
        warn_once(f"damaged:{run.id}\0{key}", "%s is damaged in its file: counted", what)

    # ------------------------------------------------------------------ polling

    def poll(self) -> bool:
        """Walk the base directory once and read whatever changed; True if anything did."""
        if not self._restored:
            self.restore()
        found = discover(self.base_dir)
        if found.truncated and not self.truncated:
            _log.warning(
                "the walk of %s stopped at a bound (%d runs listed); runs beyond it are not shown",
                self.base_dir,
                len(found.runs),
            )
        self.truncated = found.truncated
        changed = self._forget_gone(found)
        if self._mark_unlisted(found):
            changed = True
        saved_at = time.monotonic()
        with self._lock:  # every run is listed (as loading) before any is read
            new = [run for run in found.runs.values() if run.id not in self._runs]
            for found_run in new:
                self._runs[found_run.id] = RunState(found_run.id, str(found_run.path))
            if new:
                self.version += 1
        # runs never read first, so a cold start shows every run's data soon
        runs = sorted(found.runs.values(), key=lambda r: self._runs[r.id].status != "loading")
        for found_run in runs:
            if self._stop.is_set():
                break
            if self._update_run(found_run):
                changed = True
            if time.monotonic() - saved_at > SAVE_EVERY:
                with self._lock:
                    self._save()
                saved_at = time.monotonic()
        with self._pass_done:
            self._save()
            if self.loading:
                self.loading = False
                self.version += 1
            self.passes += 1
            self._pass_done.notify_all()
        return changed

    def _forget_gone(self, found: Discovery) -> bool:
        """Drop the runs no longer found (not those in a directory that cannot be listed)."""
        with self._lock:
            gone = [
                name
                for name in self._runs
                if name not in found.runs and _unlisted_reason(name, found) is None
            ]
            for name in gone:
                run = self._runs.pop(name)
                for series in run.series.values():
                    self.store.truncate(series.key, 0)
                self._gone.add(name)
                self._dirty.discard(name)
            if gone:
                self.version += 1
            return bool(gone)

    def _mark_unlisted(self, found: Discovery) -> bool:
        """Say which runs' directories cannot be listed now (or can again); True if any
        run's mark changed. A directory that cannot be listed is said once in the log."""
        for name, reason in found.unlisted.items():
            warn_once(
                f"unlisted:{self.base_dir}\0{name}",
                "cannot list %s under %s (%s): its runs are not read while it cannot",
                name,
                self.base_dir,
                reason,
            )
        changed = False
        with self._lock:
            for run in self._runs.values():
                reason = None if run.id in found.runs else _unlisted_reason(run.id, found)
                if run.unlisted != reason:
                    run.unlisted = reason
                    self._dirty.add(run.id)
                    changed = True
            if changed:
                self.version += 1
        return changed

    def _update_run(self, found: FoundRun) -> bool:
        with self._lock:
            run = self._runs[found.id]
        if not self._changed(run, found):
            return False
        try:
            self._read_run(run, found)
        except Exception as err:  # one run's trouble must not stop the others
            _log.exception("reading run %s failed", found.id)
            with self._lock:
                run.status, run.error = "error", f"{type(err).__name__}: {err}"
        with self._lock:
            if run.status == "loading":
                run.status = "ready"
            run.updated = max((f.mtime_ns for f in found.files), default=0) / 1e9
            self._dirty.add(run.id)
            self.version += 1
        return True

    @staticmethod
    def _changed(run: RunState, found: FoundRun) -> bool:
        if run.status == "loading" or len(found.files) != len(run.files):
            return True
        for file in found.files:
            state = run.files.get(file.name)
            if state is None or (state.size, state.mtime_ns, state.ctime_ns) != (
                file.size,
                file.mtime_ns,
                file.ctime_ns,
            ):
                return True
        return False

    def _read_run(self, run: RunState, found: FoundRun) -> None:
        groups: dict[str, list[FoundFile]] = {}
        for file in found.files:
            groups.setdefault(_group(file_rank(file.name)), []).append(file)
        with self._lock:
            for group in set(run.order) - set(groups):  # every file of a rank vanished
                self._reset_group(run, group)
                del run.order[group]
            for name in set(run.files) - {f.name for f in found.files}:
                run.files.pop(name, None)
        for group, files in groups.items():
            if not self._continues(run, group, files, found.path):
                with self._lock:
                    self._reset_group(run, group)
            for file in files:
                if self._stop.is_set():
                    return
                self._read_file(run, file, found.path)
            with self._lock:
                run.order[group] = [f.name for f in files]

    def _continues(
        self, run: RunState, group: str, files: list[FoundFile], directory: Path
    ) -> bool:
        """Whether the files read before are still there, in order, and only grew."""
        read_before = run.order.get(group, [])
        if [f.name for f in files[: len(read_before)]] != read_before:
            return False
        for file in files[: len(read_before)]:
            state = run.files.get(file.name)
            if state is None or file.size < state.offset:
                return False
            if state.offset and (state.size, state.mtime_ns) != (file.size, file.mtime_ns):
                try:
                    if _head(directory / file.name) != state.head:
                        return False
                except OSError:
                    return False
        return True

    def _reset_group(self, run: RunState, group: str) -> None:
        for name in [n for n, s in run.series.items() if _group(s.rank) == group]:
            self.store.truncate(run.series.pop(name).key, 0)
        for key in [k for k in run.buckets if k.split("\0", 1)[0] == group]:
            del run.buckets[key]
            run.changed_buckets.add(key)
        for name in run.order.get(group, []):
            run.files.pop(name, None)
        run.order[group] = []

    def _read_file(self, run: RunState, file: FoundFile, directory: Path) -> None:
        state = run.files.get(file.name)
        if state is None:
            state = FileState(file.name, file.kind, file_rank(file.name))
            with self._lock:
                run.files[file.name] = state
        path = directory / file.name
        if state.unreadable and (state.size, state.ctime_ns) == (file.size, file.ctime_ns):
            return
        probe = state.ctime_ns != file.ctime_ns  # permissions may have changed
        while state.offset < file.size and not self._stop.is_set():
            stats = ReadStats()
            try:
                if not state.head:
                    state.head = _head(path)
                columns, end = read_file_scalars(
                    path,
                    file.kind,
                    start=state.offset,
                    engine=self._engine(file.size - state.offset),
                    stats=stats,
                    other=self._sample_collector(run, state, path),
                    limit=READ_LIMIT,
                    values=False,  # indexed only: a value is read back when a page asks
                )
            except NotAnEventFileError:
                state.unreadable = True
                _seen(state, file)
                return
            except FileNotFoundError:  # removed while listed: the next walk sees it gone
                return
            except OSError as err:  # unreadable (permissions, I/O error): counted, said once
                if not state.unreadable:
                    _log.warning("cannot read %s: %s", path, err)
                state.unreadable = True
                _seen(state, file)
                return
            state.unreadable = probe = False
            with self._lock:
                for tag, (steps, walls, values) in columns.items():
                    self._append(run, state, tag, steps, walls, values)
                state.records += stats.records
                state.corrupt_records += stats.corrupt_records
                state.skipped_bytes += stats.skipped_bytes
                moved = end > state.offset
                state.offset = end
                self.version += 1
            if not moved:
                break  # a torn tail: read again once the file grows
        if probe or state.read_error:
            self._probe(run, state, path)
        _seen(state, file)

    def _probe(self, run: RunState, state: FileState, path: Path) -> None:
        """Whether a file read before can still be read (one open): its values are read
        back from it, so a file that cannot be counts as damage before a page asks."""
        try:
            with open(path, "rb"):
                reason = ""
        except FileNotFoundError:  # removed while listed: the next walk sees it gone
            return
        except OSError as err:
            reason = err.strerror or str(err)
        self._note_read_error(run, state, path, reason)

    def _sample_collector(self, run: RunState, file: FileState, path: Path) -> OtherEvents:
        """What keeps references to a file's non-scalar values in the run's buckets.

        A value at the step of its series' newest, equal to it, was written again
        (MindSpore writes each epoch's last step twice): it is left out, not counted.
        """
        with self._lock:
            if file.name not in run.sample_files:
                run.sample_files.append(file.name)
            index = run.sample_files.index(file.name)

        def collect(event: Event, offset: int, length: int) -> None:
            key = _bucket_name(file.rank, event.plugin, event.tag)
            with self._lock:
                bucket = run.buckets.get(key)
                if bucket is None:
                    bucket = SampleBucket(self.caps.get(event.plugin, 10))
                    run.buckets[key] = bucket
                newest = bucket.newest()
                before = None
                if newest is not None and newest["step"] == event.step:
                    name = run.sample_files[newest["file"]]
                    state = run.files.get(name)
                    if state is not None:
                        before = (Path(run.path) / name, state.kind, newest)
            if before is not None and _unchanged_rewrite(
                before, (path, file.kind), event, offset, length
            ):
                return
            with self._lock:
                run.stale_points_dropped += bucket.offer(
                    event.step, event.wall_time, index, offset, length
                )
                run.changed_buckets.add(key)
                if run.created is None or event.wall_time < run.created:
                    run.created = event.wall_time

        return collect

    def _engine(self, unread: int) -> str:
        if self.engine_choice != "auto":
            engine = self.engine_choice
        else:
            worth_waiting = unread > SMALL_READ and fast_engine_cached()
            ready = fast_engine_ready() or (worth_waiting and fast_engine_ready(KERNEL_WAIT))
            engine = "numba" if ready else "python"
        self.engine_used = engine
        return engine

    def _append(
        self,
        run: RunState,
        file: FileState,
        tag: str,
        steps: np.ndarray,
        walls: np.ndarray,
        values: np.ndarray,
    ) -> None:
        """Add a file's new points of one tag to its series, dropping what a restart replaces."""
        if steps.size == 0:
            return
        name = _series_name(file.rank, tag)
        series = run.series.get(name)
        if series is None:
            series = SeriesState(file.rank, tag, series_key(run.id, file.rank, tag))
            run.series[name] = series
        again = self._repeated_points(series, steps, values)
        if again.any():  # MindSpore writes each epoch's last step twice: not a restart
            keep = ~again
            steps, walls, values = steps[keep], walls[keep], values[keep]
            if steps.size == 0:
                return
        # within the chunk: a point survives if every later step is above it
        later_min = np.minimum.accumulate(steps[::-1])[::-1]
        keep = np.ones(steps.size, dtype=bool)
        keep[:-1] = steps[:-1] < later_min[1:]
        lowest = int(later_min[0])
        dropped = int(steps.size - np.count_nonzero(keep))
        if series.count and lowest <= series.last_step:
            if lowest < series.last_step:
                run.restarts += 1
            if series.last_file != file.name and lowest <= series.first_step:
                run.several_trainings = True
            cut = int(np.searchsorted(self.store.steps(series.key, series.count), lowest))
            dropped += series.count - cut
            self.store.truncate(series.key, cut)
            series.count = cut
        if not keep.all():
            steps, walls, values = steps[keep], walls[keep], values[keep]
        points = np.empty(steps.size, dtype=POINT)
        points["step"], points["wall"], points["value"] = steps, walls, values
        self.store.append(series.key, points)
        if series.count == 0:
            series.first_step, series.first_wall = int(steps[0]), float(walls[0])
        series.count += int(steps.size)
        series.last_step, series.last_wall = int(steps[-1]), float(walls[-1])
        series.last_file = file.name
        run.stale_points_dropped += dropped
        first_wall = float(walls.min())
        if run.created is None or first_wall < run.created:
            run.created = first_wall

    def _repeated_points(
        self, series: SeriesState, steps: np.ndarray, values: np.ndarray
    ) -> np.ndarray:
        """Which points repeat the point before them (the series' last one, for the first):
        the same step with the same value (NaN equal to NaN)."""
        before_steps = np.empty_like(steps)
        before_values = np.empty_like(values)
        before_steps[1:], before_values[1:] = steps[:-1], values[:-1]
        if series.count and int(steps[0]) == series.last_step:
            last = self.store.read(series.key, series.count, series.count - 1)
            before_steps[0], before_values[0] = steps[0], last["value"][0]
        else:
            before_steps[0], before_values[0] = steps[0] ^ 1, values[0]  # never the same step
        same = (values == before_values) | (np.isnan(values) & np.isnan(before_values))
        return (steps == before_steps) & same

    # ------------------------------------------------------------------ persistence

    def restore(self) -> None:
        """Take up the state a previous server over the same base directory saved.

        The first :meth:`poll` does it (in the loader's thread, so a server answers
        before it is done); call it first to list the saved runs without reading.
        """
        with self._lock:
            if self._restored:
                return
            self._restored = True
            self._restore_saved()

    def _restore_saved(self) -> None:
        buckets: dict[str, dict[str, SampleBucket]] = {}
        for run_id, key, stride, items in self.store.load_samples():
            plugin = key.split("\0", 2)[1]
            array = np.frombuffer(items, dtype=SAMPLE).copy()
            cap = self.caps.get(plugin, 10)
            buckets.setdefault(run_id, {})[key] = SampleBucket(cap, array, stride)
        for run_id, data in self.store.load_states():
            try:
                run = RunState.from_dict(data)
            except (KeyError, TypeError):
                self._gone.add(run_id)
                continue
            if all(self.store.fit(s.key, s.count) for s in run.series.values()):
                run.buckets = buckets.get(run_id, {})
                self._runs[run_id] = run
            else:  # series files lost points: read the run again
                for series in run.series.values():
                    self.store.truncate(series.key, 0)
                self._gone.add(run_id)
        if self._runs:
            self.version += 1

    def _save(self) -> None:
        if not self._dirty and not self._gone:
            return
        runs = [self._runs[name] for name in self._dirty if name in self._runs]
        samples = []
        for run in runs:
            for key in run.changed_buckets:
                bucket = run.buckets.get(key)
                items = None if bucket is None else bucket.items.tobytes()
                samples.append((run.id, key, 0 if bucket is None else bucket.stride, items))
            run.changed_buckets.clear()
        self.store.save_states([(run.id, run.to_dict()) for run in runs], self._gone, samples)
        self._dirty.clear()
        self._gone.clear()
