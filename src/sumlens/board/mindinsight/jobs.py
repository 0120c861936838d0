"""Train jobs as MindInsight 2.3.1 loads them, for the routes of :mod:`.routes`.

MindInsight reads a train job differently from our loader (:mod:`sumlens.board.data.loader`),
and its routes show that reading, so :class:`JobIndex` reads the job's summary files again
the way MindInsight does, keeping small values and where the large ones lie. It reads them
through the read surface (:class:`~sumlens.board.data.surface.ReadSurface`: the raw records
of a file from an offset, a checked payload) and follows the files the surface lists, so
its routes show what ``/api/v1`` shows: a file read before that shrank, was written anew or
went away makes it read the job again from the start, and so does a file that could not be
read (its permissions, an I/O error) once it can. Its own reading rules:

* **All files of a directory are one job, read one after the other** in MindInsight's
  order (:func:`mindinsight_order`: by the seconds in the name, then by name *descending*),
  whatever rank wrote them. Reading never goes back to a file before the current one; a
  file ending in an incomplete record holds up the later ones until it is complete (or
  ten minutes old) and marks the job not *integral*.
* **Tags** are ``<tag>/<plugin>``; a graph's tag is its file name (``... (optimized)`` for
  the optimized graph), and a new graph replaces the graphs of earlier files. A job keeps
  at most 300 tags, 6 tensor tags and 10 per graph kind (the oldest goes first).
* **Sampling**: each tag keeps at most 1,000 scalars, 10 images, 50 histograms, 20 tensors,
  1 graph and 500 other values, chosen by MindInsight's reservoir (:class:`Reservoir`:
  seeded, so the same files give the same choice).
* **Steps going back** (a resumed training, two ranks in one directory) drop the kept
  values of that step, and those of later steps that came from an earlier file
  (``summary.<n>`` compared as text); later steps from the same file stay.

Memory per job stays bounded by those caps. :class:`JobPool` keeps the indexes of at most
15 jobs (MindInsight's cache), the most recently used.
"""

from __future__ import annotations

import bisect
import logging
import random
import threading
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sumlens._proto import summary_pb2
from sumlens.board.data.surface import ReadSurface, RunFile
from sumlens.board.mindinsight.graph_nodes import NodeGraph
from sumlens.board.mindinsight.values import (
    TensorSummary,
    stored_histogram,
    summarize_tensor,
    tensor_values,
)
from sumlens.board.plugins import MINDINSIGHT_PLUGINS
from sumlens.io import NotAnEventFileError, ReadStats, masked_crc32c
from sumlens.io.decode import check_ms_value
from sumlens.io.naming import mindinsight_order, summary_number

PLUGINS = MINDINSIGHT_PLUGINS
"""MindInsight's plugin names, in its order (declared in :mod:`sumlens.board.plugins`)."""
SAMPLES_PER_TAG = {
    "scalar": 1000,
    "image": 10,
    "graph": 1,
    "optimized_graph": 1,
    "histogram": 50,
    "tensor": 20,
}
"""Values a tag keeps, by MindInsight's plugin name (:data:`DEFAULT_SAMPLES` for the others)."""
DEFAULT_SAMPLES = 500
TAGS_PER_PLUGIN = {"graph": 10, "optimized_graph": 10, "tensor": 6}
"""Tags a job keeps of these plugins (each also counts in :data:`MAX_TAGS`)."""
MAX_TAGS = 300
MAX_DELETED_TAGS = MAX_TAGS * 100
KEPT_TAGS = frozenset({"ms_output_optimize.pb", "ms_output_optimize.pb (optimized)"})
"""Graph tags never dropped to make room."""
POOL_SIZE = 15
"""Train jobs whose index is kept (MindInsight's loader pool)."""
STALE_SECONDS = 600.0
"""A file that ends in an incomplete record is given up on once this old."""
_log = logging.getLogger("sumlens.board")


def file_time(mtime_ns: int) -> datetime:
    """A file's modification time as Python's ``os.stat`` gives it, in local time."""
    seconds, nanoseconds = divmod(mtime_ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds + nanoseconds * 1e-9).astimezone()


# ---------------------------------------------------------------------- kept values


@dataclass(frozen=True, slots=True)
class Where:
    """Where a value's record lies: its file and the payload's offset and length."""

    file: str
    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class ImageValue:
    """An image's size; its bytes stay in the file."""

    width: int
    height: int
    where: Where


@dataclass(frozen=True, slots=True)
class TensorValue:
    """A tensor's summary; its values stay in the file."""

    summary: TensorSummary
    where: Where


@dataclass(frozen=True, slots=True)
class LandscapeValue:
    """A loss landscape's interval (empty for the final landscape); the rest stays in the file."""

    intervals: tuple[int, ...]
    where: Where


@dataclass(frozen=True, slots=True)
class Sample:
    """One kept value of a tag: float, :class:`ImageValue`, :class:`~.mindinsight_values.Buckets`,
    :class:`TensorValue`, :class:`LandscapeValue` or :class:`~.graph_nodes.NodeGraph`."""

    step: int
    wall_time: float
    file: str
    value: Any


class Reservoir:
    """At most ``size`` samples of a tag, sorted by step, chosen as MindInsight chooses.

    Once full, the ``n``-th value (counting from 0) replaces the sample at a position
    drawn from ``randint(0, n)`` of a generator seeded with 0, or the newest sample when
    the draw is ``size`` or more; the newest value is always kept. Removing samples scales
    the count of values seen by the fraction kept.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.samples: list[Sample] = []
        self._seen = 0
        self._random = random.Random(0)

    def add(self, sample: Sample) -> None:
        """Keep ``sample`` (in step order), making room if the reservoir is full."""
        if len(self.samples) >= self.size:
            drawn = self._random.randint(0, self._seen)
            if drawn < self.size:
                self.samples.pop(drawn)
            else:
                self.samples.pop()
        if not self.samples or sample.step > self.samples[-1].step:
            self.samples.append(sample)
        else:
            self.samples.insert(bisect.bisect_left(self.samples, sample.step, key=_step), sample)
        self._seen += 1

    def keep_only(self, keep: Callable[[Sample], bool]) -> None:
        """Drop the samples ``keep`` refuses."""
        before = len(self.samples)
        if not before:
            return
        self.samples = [sample for sample in self.samples if keep(sample)]
        if len(self.samples) < before:
            kept = len(self.samples) / before
            self._seen = round(self._seen * kept)


def _step(sample: Sample) -> int:
    return sample.step


class JobEvents:
    """The tags of a job and their reservoirs (see the module docstring)."""

    def __init__(self) -> None:
        self.tags: list[str] = []
        self.by_plugin: dict[str, list[str]] = defaultdict(list)
        self.reservoirs: dict[str, Reservoir] = {}
        self.plugin_of: dict[str, str] = {}
        self._deleted: set[str] = set()

    def add(self, plugin: str, tag: str, sample: Sample) -> None:
        """Take one value of ``tag``."""
        if tag not in self.tags:
            victim = self._room_needed(plugin)
            if victim is not None:
                if tag in self._deleted:
                    return
                self.delete(victim)
            self.tags.append(tag)
        if tag not in self.by_plugin[plugin]:
            self.by_plugin[plugin].append(tag)
        self.plugin_of[tag] = plugin
        reservoir = self.reservoirs.get(tag)
        if reservoir is None:
            reservoir = Reservoir(SAMPLES_PER_TAG.get(plugin, DEFAULT_SAMPLES))
            self.reservoirs[tag] = reservoir
        if reservoir.samples and sample.step <= reservoir.samples[-1].step:
            number = summary_number(sample.file)
            reservoir.keep_only(
                lambda kept: (
                    kept.step < sample.step
                    or (kept.step > sample.step and summary_number(kept.file) >= number)
                )
            )
        reservoir.add(sample)

    def delete(self, tag: str) -> None:
        """Forget a tag and its samples."""
        if len(self._deleted) < MAX_DELETED_TAGS:
            self._deleted.add(tag)
        self.tags.remove(tag)
        plugin = self.plugin_of.pop(tag, None)
        if plugin is not None and tag in self.by_plugin[plugin]:
            self.by_plugin[plugin].remove(tag)
        self.reservoirs.pop(tag, None)

    def _room_needed(self, plugin: str) -> str | None:
        """The tag to drop before a new tag of ``plugin`` comes in, if any."""
        limit = TAGS_PER_PLUGIN.get(plugin)
        if limit is not None and len(self.by_plugin[plugin]) >= limit:
            return _first_droppable(self.by_plugin[plugin])
        if len(self.tags) >= MAX_TAGS:
            return _first_droppable(self.tags)
        return None

    def plugin_tags(self, plugin: str) -> list[str]:
        """The tags of a plugin, sorted."""
        return sorted(self.by_plugin.get(plugin, []))

    def samples(self, tag: str) -> list[Sample] | None:
        """The kept samples of a tag (None for an unknown tag)."""
        reservoir = self.reservoirs.get(tag)
        return None if reservoir is None else list(reservoir.samples)


def _first_droppable(tags: list[str]) -> str | None:
    return next((tag for tag in tags if tag not in KEPT_TAGS), None)


# ---------------------------------------------------------------------- reading a job


def summary_files(files: list[RunFile]) -> list[RunFile]:
    """The files MindInsight reads values from: ``summary.<n>`` names, not lineage."""
    return [state for state in files if state.kind == "summary"]


Listed = tuple[int, int, bool, str]
"""A file as the read surface lists it: size, modification time (ns), unreadable, read error."""
PROBE_BYTES = 8
"""A record's header is its length (8 bytes) then their checksum: read as a checked
payload, those 8 bytes say that a file can be read and starts with a record."""


@dataclass(slots=True)
class _Read:
    """A file read (in part): its size and time as listed when last checked, and where its
    first record's payload lies and its checksum (to tell a file that only grew from one
    written anew: MindSpore's first record holds the time the file was made)."""

    size: int
    mtime_ns: int
    first: tuple[int, int, int] | None = None


class JobIndex:
    """MindInsight's reading of one train job's summary files (see the module docstring),
    through the read surface and following what it lists (:meth:`refresh`)."""

    def __init__(self, train_id: str, surface: ReadSurface) -> None:
        self.train_id = train_id
        self.surface = surface
        self.events = JobEvents()
        self.integral = True
        self.lock = threading.RLock()
        self._listed: dict[str, Listed] = {}
        self._read: dict[str, _Read] = {}
        self._failed: set[str] = set()
        self._current = ""
        self._offset = 0

    def refresh(self, files: list[RunFile]) -> None:
        """Read what the job's summary ``files`` (the surface's list) gained since the last
        call. The job is read again from its start when what was read no longer stands: a
        file listed before is gone, one read before shrank or was written anew, or one that
        could not be read (its permissions, an I/O error) now can."""
        listed = {
            f.name: (f.size, f.mtime_ns, f.unreadable, f.read_error) for f in summary_files(files)
        }
        with self.lock:
            if listed == self._listed and self.integral and not self._failed:
                return
            if not self._still_stands(listed):
                self._start_over()
            self._listed = listed
            order = mindinsight_order(list(listed))
            start = order.index(self._current) if self._current in order else 0
            for name in order[start:]:
                if name != self._current:
                    self._current, self._offset = name, 0
                if not self._read_file(name, listed[name]):
                    return

    def tags(self, plugin: str) -> list[str]:
        """The tags of a plugin, sorted."""
        with self.lock:
            return self.events.plugin_tags(plugin)

    def samples(self, tag: str) -> tuple[str | None, list[Sample] | None]:
        """The plugin and the kept samples of a tag (None, None for an unknown tag)."""
        with self.lock:
            return self.events.plugin_of.get(tag), self.events.samples(tag)

    def payload(self, where: Where) -> bytes | None:
        """The payload of a kept value's record; None when its file no longer holds it or
        cannot be read now."""
        return self.surface.payload(self.train_id, where.file, where.offset, where.length)

    def _still_stands(self, listed: dict[str, Listed]) -> bool:
        """Whether what was read so far still holds for the files ``listed`` now."""
        if self._listed.keys() - listed.keys():
            return False
        for name, read in self._read.items():
            size, mtime_ns = listed[name][:2]
            if size < read.size:  # the surface's sizes: ours may run ahead of its last look
                return False
            if (size, mtime_ns) != (read.size, read.mtime_ns):
                if read.first is not None and not self._holds(name, *read.first):
                    return False
                read.size, read.mtime_ns = size, mtime_ns
        return not any(self._readable_again(name) for name in self._failed)

    def _holds(self, name: str, offset: int, length: int, crc: int) -> bool:
        """Whether file ``name`` still holds the record read at ``offset``."""
        payload = self.surface.payload(self.train_id, name, offset, length)
        return payload is not None and masked_crc32c(payload) == crc

    def _readable_again(self, name: str) -> bool:
        return self.surface.payload(self.train_id, name, 0, PROBE_BYTES) is not None

    def _start_over(self) -> None:
        self.events, self.integral = JobEvents(), True
        self._read.clear()
        self._failed.clear()
        self._current, self._offset = "", 0

    def _read_file(self, name: str, listed: Listed) -> bool:
        """Read ``name`` from the current offset; False when a torn tail holds it up."""
        records = self.surface.record_file(self.train_id, name, self._offset)
        if records is None:  # gone since it was listed: the next refresh starts over
            return True
        read = self._read.setdefault(name, _Read(listed[0], listed[1]))
        stats = ReadStats()
        try:
            for offset, payload in records.read_located(stats):
                if read.first is None:
                    read.first = (offset, len(payload), masked_crc32c(payload))
                self._take(name, offset, payload)
        except NotAnEventFileError:
            return True
        except OSError as err:  # the loader says it in the run list; tried again each refresh
            _log.debug("%s of %s cannot be read now: %r", name, self.train_id, err)
            self._failed.add(name)
            return True
        finally:
            self._offset = records.offset
        self.integral = stats.torn_tail_bytes == 0
        if self.integral:
            return True
        return time.time() - listed[1] / 1e9 > STALE_SECONDS

    def _take(self, file: str, offset: int, payload: bytes) -> None:
        """Add the values of one record (a record MindInsight cannot read adds nothing, nor
        one our readers refuse as damaged: the run list counts it)."""
        try:
            event = summary_pb2.Event.FromString(payload)
            found = list(_values(event, file, Where(file, offset, len(payload))))
        except Exception as err:  # protobuf's DecodeError, values that do not fill a shape ...
            _log.debug("%s: the record at %d shows nothing: %r", file, offset, err)
            return
        for plugin, tag, value in found:
            if plugin == "graph":
                for old in self.events.plugin_tags("graph"):
                    if summary_number(old) and not old.endswith("_lineage"):
                        self.events.delete(old)
            self.events.add(plugin, tag, Sample(event.step, event.wall_time, file, value))


_VALUE_KINDS = {
    "scalar_value": "scalar",
    "image": "image",
    "histogram": "histogram",
    "tensor": "tensor",
    "loss_landscape": "loss_landscape",
}


def _values(event: summary_pb2.Event, file: str, where: Where) -> Any:
    """(plugin, tag, kept value) of each value of an event, in MindInsight's order."""
    kind = event.WhichOneof("what")
    if kind == "graph_def":
        for graph_plugin, tag, optimized in (("graph", file, False), ("optimized_graph", "", True)):
            graph = NodeGraph.build(event.graph_def, optimized)
            if not graph.empty:
                yield graph_plugin, tag or f"{file} (optimized)", graph
        return
    if kind != "summary":
        return
    for value in event.summary.value:
        field_name = value.WhichOneof("value")
        plugin = _VALUE_KINDS.get(field_name or "")
        if plugin is None:
            continue
        check_ms_value(value)  # a negative size or count, a shape no tensor has: damage
        kept = _kept_value(value, plugin, where)
        if kept is not None:
            yield plugin, f"{value.tag}/{plugin}", kept


def _kept_value(value: Any, plugin: str, where: Where) -> Any:
    if plugin == "scalar":
        return value.scalar_value
    if plugin == "image":
        return ImageValue(value.image.width, value.image.height, where)
    if plugin == "histogram":
        found = value.histogram
        return stored_histogram(found.buckets, found.max, found.min)
    if plugin == "tensor":
        tensor = value.tensor
        values = tensor_values(tensor.dims, tensor.float_data)
        return TensorValue(summarize_tensor(tensor.dims, tensor.data_type, values), where)
    return LandscapeValue(tuple(value.loss_landscape.loss_path.intervals), where)


# ---------------------------------------------------------------------- the jobs


@dataclass(frozen=True, slots=True)
class JobInfo:
    """A train job as MindInsight's listing knows it (from the names and times of its files)."""

    train_id: str
    summary_files: int
    lineage_files: int
    create_time: datetime
    update_time: datetime
    lineage: tuple[tuple[str, int, int], ...]
    """Its lineage files (name, size, modification time in ns), in MindInsight's order."""


def job_info(train_id: str, files: list[RunFile]) -> JobInfo | None:
    """The listing entry of a run, or None when MindInsight would not list it (no summary
    or lineage file: TensorBoard files only)."""
    listed = []
    times: list[tuple[datetime, datetime]] = []  # (from the name, modified), oldest first
    for state in sorted(files, key=lambda f: (f.mtime_ns, f.name)):
        if state.kind not in ("summary", "lineage") or state.name.endswith("_explain"):
            continue
        try:
            created = datetime.fromtimestamp(int(summary_number(state.name))).astimezone()
        except (OverflowError, OSError, ValueError):  # a number no date has: not listed
            continue
        listed.append(state)
        if not times or times[-1][0] < created:
            times.append((created, file_time(state.mtime_ns)))
    if not listed:
        return None
    create, update = times[-1]
    lineage = {f.name: (f.name, f.size, f.mtime_ns) for f in listed if f.kind == "lineage"}
    return JobInfo(
        train_id,
        sum(f.kind == "summary" for f in listed),
        len(lineage),
        create,
        update,
        tuple(lineage[name] for name in mindinsight_order(list(lineage))),
    )


def listing_order(jobs: list[JobInfo]) -> list[JobInfo]:
    """Newest update first; at equal times, by the second then the train id, as MindInsight."""
    by_second = sorted(jobs, key=lambda job: (-int(job.update_time.timestamp()), job.train_id))
    return sorted(by_second, key=lambda job: job.update_time, reverse=True)


class JobPool:
    """The indexes of the most recently used train jobs (at most :data:`POOL_SIZE`)."""

    def __init__(self, surface: ReadSurface, size: int = POOL_SIZE) -> None:
        self.surface = surface
        self.size = size
        self._jobs: OrderedDict[str, JobIndex] = OrderedDict()
        self._lock = threading.Lock()

    def cached(self, train_id: str) -> bool:
        """Whether the job's index is kept now."""
        with self._lock:
            return train_id in self._jobs

    def index(self, train_id: str) -> JobIndex | None:
        """The job's index, read up to now (made, and the least used one dropped, if
        needed); None for a job MindInsight cannot load (no summary file)."""
        files = self.surface.files(train_id)
        if not summary_files(files):
            return None
        with self._lock:
            job = self._jobs.get(train_id)
            if job is None:
                job = JobIndex(train_id, self.surface)
                self._jobs[train_id] = job
                while len(self._jobs) > self.size:
                    self._jobs.popitem(last=False)
            self._jobs.move_to_end(train_id)
        job.refresh(files)
        return job
