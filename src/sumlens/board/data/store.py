"""Full-resolution scalar series on disk, in append-only segment files shared by all series.

The dashboard must hold millions of points of thousands of runs without holding them in
memory, and what a loading pass costs must follow the bytes it reads, not the number of
series: a run of 12,345 tags is one write, not 12,345 files. So points go to a few
append-only *segment* files of ``(step, wall, value)`` records (:data:`POINT`), each write
holding the new points of many series side by side, and a series is its list of
:data:`Chunk` s - ``(segment, first point, count)`` - kept in its state (saved with the
run's state: :mod:`sumlens.board.data.persist`). Reading a series gathers its chunks with
``pread``.

Nothing is rewritten in place. Cutting a series (a restarted run drops points) shortens
or drops chunks; the points they held are *dead*. Once the dead points pass
:data:`COMPACT_SHARE` of the store (:meth:`SegmentStore.should_compact`), every series
with points in a segment holding dead ones is copied into a new segment
(:meth:`SegmentStore.rewrite`) and the segments left unheld are removed
(:meth:`SegmentStore.sweep`); a series appended to in many small pieces has its newest
chunks merged (:func:`merge_tail`), so reads stay a few ``pread`` calls. When to do either
is :func:`sumlens.board.data.persist.tidy`'s call, at each save.

Crash safety: a segment longer than the saved chunks say is fine (a write whose state was
not saved: dead points); a chunk past its segment's end (:meth:`SegmentStore.adopt` says
so) means its run must be read again. Each server session writes to segments of its own,
numbered after those found. A cache directory is held with an exclusive lock, so two
servers over the same base directory never write the same files: the second takes the
next free directory.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

POINT = np.dtype([("step", "<i8"), ("wall", "<f8"), ("value", "<f8")])
"""One stored point; a segment file is a flat array of these."""
Chunk = tuple[int, int, int]
"""Where some consecutive points of a series lie: ``(segment, first point, count)``."""
SEGMENT_POINTS = (64 << 20) // POINT.itemsize
"""A segment takes writes until it holds this many points (64 MiB); then the next begins."""
COMPACT_SHARE = 0.5
"""Dead points are copied away once they pass this share of all points stored ..."""
COMPACT_MIN_POINTS = (4 << 20) // POINT.itemsize
"""... and 4 MiB: below that the waste is not worth a copy."""
MAX_CHUNKS = 16
"""A series in more chunks than this has its newest ones merged (:func:`merge_tail`)."""
MAX_CACHE_DIRS = 16
"""Cache directories tried per base directory when others are locked by other servers."""
_SUFFIX = ".seg"


class SegmentStore:
    """The segment files under ``root/segments`` of a claimed cache directory ``root``.

    The caller serialises calls (the loader's lock); :meth:`read` and :meth:`count_below`
    only read files and may run beside each other.
    """

    def __init__(self, workspace: Path, base_dir: Path | str) -> None:
        self.root, self._lock_handle = _claim(workspace / "cache", base_dir)
        shutil.rmtree(self.root / "series", ignore_errors=True)  # the layout before segments
        self._dir = self.root / "segments"
        self._dir.mkdir(exist_ok=True)
        self._size: dict[int, int] = {}  # points in each segment file
        self._live: dict[int, int] = {}  # points of each segment some chunk holds
        for path in self._dir.glob(f"*{_SUFFIX}"):
            self._size[int(path.stem)] = path.stat().st_size // POINT.itemsize
        self._active = max(self._size, default=-1) + 1  # this session's first segment
        self._writer: int | None = None
        self._readers: dict[int, int] = {}

    # ------------------------------------------------------------------ writing

    def write(self, points: np.ndarray) -> tuple[int, int]:
        """Append ``points`` (:data:`POINT` records) in one write; ``(segment, first
        point)`` of where they start. They are counted as held by series (chunks of them
        are, at once: :meth:`release` what is not)."""
        if self._writer is None or self._size[self._active] >= SEGMENT_POINTS:
            self._open_next()
        segment = self._active
        first = self._size[segment]
        data = np.ascontiguousarray(points, dtype=POINT).view(np.uint8).data
        assert self._writer is not None
        written = 0
        try:
            while written < len(data):
                written += os.write(self._writer, data[written:])
        except OSError:  # a full disk ...: no part of the points stays, so the next fit
            os.ftruncate(self._writer, first * POINT.itemsize)
            raise
        self._size[segment] = first + len(points)
        self._live[segment] = self._live.get(segment, 0) + len(points)
        return segment, first

    def release(self, chunks: Sequence[Chunk]) -> None:
        """The points of ``chunks`` are no longer held by any series."""
        for segment, _, count in chunks:
            self._live[segment] -= count

    def cut(self, chunks: list[Chunk], count: int) -> list[Chunk]:
        """The chunks of the first ``count`` points of ``chunks``; the rest are released."""
        kept: list[Chunk] = []
        for segment, first, size in chunks:
            take = min(size, count)
            if take:
                kept.append((segment, first, take))
            if take < size:
                self._live[segment] -= size - take
            count -= take
        return kept

    def adopt(self, chunks: Sequence[Chunk]) -> bool:
        """Count restored ``chunks`` (a run's) as held; False, and none counted, when one
        lies past its segment's end: points were lost, and the run must be read again."""
        if any(first + count > self._size.get(segment, 0) for segment, first, count in chunks):
            return False
        for segment, _, count in chunks:
            self._live[segment] = self._live.get(segment, 0) + count
        return True

    # ------------------------------------------------------------------ reading

    def read(self, chunks: Sequence[Chunk], start: int = 0, stop: int | None = None) -> np.ndarray:
        """Points ``[start, stop)`` of the series made of ``chunks``, copied into memory."""
        total = sum(chunk[2] for chunk in chunks)
        stop = total if stop is None else min(stop, total)
        out = np.empty(max(0, stop - start), dtype=POINT)
        at = 0
        for segment, first, count in chunks:
            if at >= out.size:
                break
            if start >= count:
                start -= count
                continue
            take = min(count - start, out.size - at)
            self._read_into(segment, first + start, out[at : at + take])
            at += take
            start = 0
        return out

    def count_below(self, chunks: Sequence[Chunk], step: int) -> int:
        """How many leading points of a series (steps increasing) have a step below
        ``step``: where a restarted run cuts it. Reads its chunks from the newest back,
        only as far as the cut."""
        total = sum(chunk[2] for chunk in chunks)
        for segment, first, count in reversed(chunks):
            total -= count
            steps = np.empty(count, dtype=POINT)
            self._read_into(segment, first, steps)
            below = int(np.searchsorted(steps["step"], step))
            if below:
                return total + below
        return 0

    def _read_into(self, segment: int, first: int, out: np.ndarray) -> None:
        fd = self._readers.get(segment)
        if fd is None:
            fd = self._readers[segment] = os.open(self._path(segment), os.O_RDONLY)
        view = out.view(np.uint8).data
        offset = first * POINT.itemsize
        done = 0
        while done < len(view):
            got = os.preadv(fd, [view[done:]], offset + done)
            if got == 0:
                raise OSError(f"segment {self._path(segment)} ends before point {first}")
            done += got

    # ------------------------------------------------------------------ compaction

    def should_compact(self) -> bool:
        """Whether the dead points pass :data:`COMPACT_SHARE` (and :data:`COMPACT_MIN_POINTS`)."""
        size = sum(self._size.values())
        dead = size - sum(self._live.values())
        return dead >= COMPACT_MIN_POINTS and dead > COMPACT_SHARE * size

    def wasteful(self, chunks: Sequence[Chunk]) -> bool:
        """Whether ``chunks`` lie in a segment that holds dead points (compaction moves them)."""
        return any(self._live.get(seg, 0) < self._size.get(seg, 0) for seg, _, _ in chunks)

    def rewrite(self, series: Sequence[list[Chunk]], fresh: bool = False) -> list[list[Chunk]]:
        """Each of ``series`` (chunk lists) copied into one new chunk, all in one write; the
        old chunks are released. ``fresh`` writes to a new segment (compaction: never
        beside the dead points being left). Segments left with no live point go at
        :meth:`sweep`."""
        if not series:
            return []
        parts = [self.read(chunks) for chunks in series]
        if fresh and self._writer is not None:
            self._open_next()
        segment, first = self.write(np.concatenate(parts))
        moved = []
        for chunks, part in zip(series, parts, strict=True):
            self.release(chunks)
            moved.append([(segment, first, part.size)] if part.size else [])
            first += part.size
        return moved

    def sweep(self) -> None:
        """Remove the segment files no series holds a point of (not this session's newest).

        Call it only once the state that no longer names them is saved."""
        for segment in [s for s in self._size if not self._live.get(s) and s != self._active]:
            fd = self._readers.pop(segment, None)
            if fd is not None:
                os.close(fd)
            self._path(segment).unlink(missing_ok=True)
            del self._size[segment]
            self._live.pop(segment, None)

    # ------------------------------------------------------------------ files

    def _path(self, segment: int) -> Path:
        return self._dir / f"{segment:08d}{_SUFFIX}"

    def _open_next(self) -> None:
        if self._writer is not None:
            os.close(self._writer)
            self._active = max(self._size) + 1
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_TRUNC
        self._writer = os.open(self._path(self._active), flags, 0o600)
        self._size[self._active] = 0

    def close(self) -> None:
        """Close the segment files and let another server take this cache directory."""
        for fd in [self._writer, *self._readers.values()]:
            if fd is not None:
                os.close(fd)
        self._writer, self._readers = None, {}
        fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
        self._lock_handle.close()


def merge_tail(chunks: Sequence[Chunk]) -> int:
    """How many of the newest ``chunks`` to merge into one when there are more than
    :data:`MAX_CHUNKS`: at least two, and back while a chunk is no larger than those after
    it together, so chunk sizes shrink geometrically towards the newest and a series grown
    in many small pieces is copied O(log n) times per point."""
    if len(chunks) <= MAX_CHUNKS:
        return 0
    total = merged = 0
    for _, _, count in reversed(chunks):
        if merged >= 2 and count > total:
            break
        total += count
        merged += 1
    return merged


def _claim(cache: Path, base_dir: Path | str) -> tuple[Path, Any]:
    """The first cache directory of ``base_dir`` (a folder, or a URL) no other server holds,
    locked."""
    digest = hashlib.sha1(os.fsencode(base_dir)).hexdigest()[:16]
    cache.mkdir(parents=True, exist_ok=True)
    for n in range(MAX_CACHE_DIRS):
        root = cache / (digest if n == 0 else f"{digest}-{n}")
        root.mkdir(exist_ok=True)
        handle = open(root / "lock", "a+b")  # noqa: SIM115 - held until close()
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        (root / "base_dir.txt").write_text(os.fsdecode(base_dir) + "\n")
        return root, handle
    raise RuntimeError(
        f"{MAX_CACHE_DIRS} servers already cache {os.fsdecode(base_dir)!r} in {cache}; "
        "stop one of them"
    )
