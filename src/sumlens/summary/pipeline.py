"""The writer pipeline: everything a ``SummaryRecord`` does off the training thread.

The caller thread only enqueues :class:`~sumlens.summary.items.StepBatch` objects on a
``SimpleQueue`` (no lock shared with the writer, so a signal handler that interrupts the
caller can still flush). One writer thread per record drains the queue every
:data:`WAKE_SECONDS` — sooner for a flush, a close, or when much is queued — has the heavy
values (PNG, tensor packing) encoded — on a small pool of worker threads when there are
several, since Pillow, numpy and our numba kernels release the GIL — then serializes,
frames and appends them in order with one write per file, so data is readable by other
processes within a fraction of a second without a flush. Waking once per many steps
matters on a busy machine: the writer's code then runs warm, and it takes the training
thread's core and the GIL far less often.

Memory is bounded: each batch's estimated memory (its snapshots, or its encoded size
if larger) is added to ``enqueued`` by the caller and to ``written`` by the writer once
on disk; a caller that finds more than ``max_pending_bytes`` (or
``max_pending_batches``) in flight waits for the writer (back-pressure), it never
drops data.

Write errors are the writer's to catch: they are logged once per cause, mark the
pipeline :attr:`~WriterPipeline.failed` (``record()`` then returns False) and, with
``raise_exception=True``, are re-raised on the caller's thread at its next call. A value
that cannot be encoded costs only itself, never the rest of its step; a block of scalar
steps that the compiled encoder cannot take — or not yet, while it compiles
(:mod:`sumlens.summary.kernels`) — is written by the protobuf encoder instead.
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sumlens._log import log_once, logger
from sumlens.io.framing import encode_record
from sumlens.summary.encoders import ENCODERS, EncodedStep, encode_value, is_heavy
from sumlens.summary.eventfile import EventFile
from sumlens.summary.items import Item, StepBatch
from sumlens.summary.kernels import ready as kernels_ready
from sumlens.summary.scalar_block import (
    BLOCK_SECONDS,
    ScalarBlock,
    ScalarCollector,
    encode_scalar_block,
)

MAX_PENDING_BYTES = 512 * 1024 * 1024
"""Default bound on the estimated bytes of queued, unwritten values."""
MAX_PENDING_BATCHES = 100_000
"""Default bound on queued, unwritten ``record`` calls (keeps many tiny steps bounded too)."""
WAKE_SECONDS = BLOCK_SECONDS
"""How often the writer drains the queue when nobody asks it to."""
WAKE_BYTES = 4 * 1024 * 1024
"""Queued bytes at which the caller wakes the writer at once."""
HAND_OVER_SECONDS = 1.0
"""How long a hand-over of scalar rows waits for their lock (see :meth:`WriterPipeline.submit`)."""
POOL_MIN_BYTES = 256 * 1024
"""Bytes of heavy values (images, tensors, unbinned histograms) a round must hold before
they are encoded on the pool: handing a few small values to other threads costs more than
encoding them here (a thread switch each, and threads that compete with training for the
cores)."""


@dataclass(slots=True)
class _Marker:
    """A flush (``stop=False``) or close (``stop=True``) request; ``done`` is set when handled."""

    done: threading.Event
    stop: bool = False


MAX_DRAIN = 4096
"""Entries the writer takes from the queue per round."""


@dataclass(slots=True)
class _Output:
    """Framed summary records and lineage payloads gathered for one append per file."""

    summary: list[tuple[memoryview, np.ndarray]] = field(default_factory=list)
    lineage: list[bytes] = field(default_factory=list)
    tensorboard: list[bytes] = field(default_factory=list)
    pending_bytes: int = 0
    batches: int = 0

    def add_summary(self, record: bytes) -> None:
        self.summary.append((memoryview(record), np.array([len(record)], dtype=np.int64)))

    def add_summary_framed(self, data: bytes | np.ndarray, ends: np.ndarray) -> None:
        """Records framed back to back in ``data`` (which may be longer than ``ends[-1]``)."""
        if len(ends):
            view = data.data if isinstance(data, np.ndarray) else memoryview(data)
            self.summary.append((view.cast("B")[: int(ends[-1])], ends))

    def summary_framed(self) -> tuple[bytes | memoryview, np.ndarray]:
        """All summary records back to back, with the end offset of each."""
        if len(self.summary) == 1:
            return self.summary[0]
        offsets = np.cumsum([0] + [data.nbytes for data, _ in self.summary[:-1]])
        ends = np.concatenate([e + o for (_, e), o in zip(self.summary, offsets, strict=True)])
        return b"".join(data for data, _ in self.summary), ends


class EncoderPool:
    """A few daemon threads running encode jobs (daemon: they never keep a process alive)."""

    def __init__(self, workers: int) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future] | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"sumlens-encoder-{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, job: Callable[[], Any]) -> Future:
        """Run ``job`` on a worker; its result or exception lands in the returned future."""
        future: Future = Future()
        self._jobs.put((job, future))
        return future

    def _work(self) -> None:
        while (entry := self._jobs.get()) is not None:
            job, future = entry
            try:
                future.set_result(job())
            except BaseException as err:
                future.set_exception(err)

    def shutdown(self) -> None:
        """Let the workers finish their queued jobs and exit."""
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join()


def _finish(item: Item, job: Item | Future, encode: Callable[[Item], Any]) -> Any:
    """The encoded value of ``item`` (from its pool job, or ``encode``-d here); None if it
    failed.

    One bad value (an empty scalar, an image that cannot be tiled) is logged and left out;
    it never stops the writer or the rest of its step.
    """
    try:
        return job.result() if isinstance(job, Future) else encode(item)
    except Exception as err:
        _value_lost(item, err)
        return None


def _value_lost(item: Item, err: Exception) -> None:
    """Log, once per tag and cause, that a value could not be written."""
    log_once(
        f"encode:{item.plugin}:{item.tag}:{type(err).__name__}",
        logging.ERROR,
        "could not write %s %r, skipped (later values of it failing alike are not logged): %r",
        item.plugin,
        item.tag,
        err,
    )


class WriterPipeline:
    """The background writer of one record: queue, encoding, files, errors."""

    def __init__(
        self,
        file_format: str,
        summary_file: EventFile,
        lineage_file: EventFile,
        workers: int,
        tensorboard_file: EventFile | None = None,
        export: Callable[[StepBatch, Item, Any], None] | None = None,
        max_pending_bytes: int = MAX_PENDING_BYTES,
        max_pending_batches: int = MAX_PENDING_BATCHES,
    ) -> None:
        self.file_format = file_format
        self._encode_step = ENCODERS[file_format]
        self.scalar_rows = ScalarCollector()
        """The caller's scalar-only rows (the scalar lane appends them, :meth:`submit` and the
        writer take them)."""
        self.summary_file = summary_file
        self.lineage_file = lineage_file
        self.tensorboard_file = tensorboard_file
        """Where a MindSpore-format record writes the events only TensorBoard's format holds
        (text, audio, PR curves ...); None for a TensorBoard-format record."""
        self._export = export
        self.max_pending_bytes = max_pending_bytes
        self.max_pending_batches = max_pending_batches
        self._queue: queue.SimpleQueue[StepBatch | ScalarBlock | _Marker] = queue.SimpleQueue()
        self._enqueued_bytes = self._written_bytes = 0
        self._enqueued_batches = self._written_batches = 0
        self._progress = threading.Event()
        self._wake = threading.Event()
        self._error: BaseException | None = None
        self.image_seconds = 0.0
        """Seconds spent encoding images so far (PNG: the costly part of an image)."""
        self._image_lock = threading.Lock()
        self.failed = False
        """True from the first failed write on (see the module docstring)."""
        self._workers = workers
        self._pool: EncoderPool | None = None
        self._thread = threading.Thread(target=self._run, name="sumlens-writer", daemon=True)
        self._thread.start()

    # ---- caller side -------------------------------------------------------------------

    def submit(self, batch: StepBatch | None = None) -> None:
        """Queue the waiting scalar rows (:attr:`scalar_rows`), then ``batch``: in recording
        order (see :class:`~sumlens.summary.scalar_block.ScalarCollector`). The only way a
        caller hands anything to the writer.

        A signal handler that interrupted this thread while it held the rows' lock would
        wait for itself: after :data:`HAND_OVER_SECONDS` it goes on without the lock.
        """
        lock = self.scalar_rows.lock
        locked = lock.acquire(timeout=HAND_OVER_SECONDS)
        try:
            block = self.scalar_rows.take()
            if block is not None:
                self._enqueue(block)
            if batch is not None:
                self._enqueue(batch)
        finally:
            if locked:
                lock.release()

    def _enqueue(self, batch: StepBatch | ScalarBlock) -> None:
        """Queue ``batch``; wait first if too much is already in flight.

        The in-flight counters are plain integers: ``enqueued`` is written by callers only
        and ``written`` by the writer only, so no lock is shared with the writer (or with a
        signal handler that interrupts a caller). Concurrent callers may miscount a few
        bytes of the bound, never lose data.
        """
        nbytes = batch.pending_bytes
        while (
            self._enqueued_bytes - self._written_bytes + nbytes > self.max_pending_bytes
            and self._enqueued_batches > self._written_batches
        ) or self._enqueued_batches - self._written_batches >= self.max_pending_batches:
            if not self._thread.is_alive():
                raise RuntimeError("the summary writer thread has stopped")
            self._progress.clear()
            self._wake.set()
            self._progress.wait(0.05)
        self._enqueued_bytes += nbytes
        self._enqueued_batches += 1
        self._queue.put(batch)
        if self._enqueued_bytes - self._written_bytes > WAKE_BYTES:
            self._wake.set()

    @property
    def pending_bytes(self) -> int:
        """Estimated bytes submitted and not yet written (what the memory bound counts)."""
        return self._enqueued_bytes - self._written_bytes

    def flush(self, timeout: float | None = None) -> bool:
        """Block until everything submitted before, and the waiting scalar rows, is written;
        False if it timed out."""
        self.submit()
        return self._request(_Marker(threading.Event()), timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Write everything, close the files and stop the thread; False if it timed out.

        Another thread recording right now may have passed its record's closed check just
        before it was set: the flush lets it finish that call, the second hand-over of
        scalar rows takes its row.
        """
        started = time.monotonic()
        self.flush(timeout)
        self.submit()
        left = None if timeout is None else max(0.0, timeout - (time.monotonic() - started))
        done = self._request(_Marker(threading.Event(), stop=True), left)
        if done:
            self._thread.join()
        return done

    def _request(self, marker: _Marker, timeout: float | None) -> bool:
        if not self._thread.is_alive():
            if not marker.stop:
                logger.error("the summary writer thread has stopped; nothing more is written")
            return True
        self._queue.put(marker)
        self._wake.set()
        waited = 0.0
        while not marker.done.wait(0.1):
            waited += 0.1
            if not self._thread.is_alive() or (timeout is not None and waited >= timeout):
                return marker.done.is_set()
        return True

    def take_error(self) -> BaseException | None:
        """The first write error since the last call (for ``raise_exception=True``)."""
        error, self._error = self._error, None
        return error

    # ---- writer thread -----------------------------------------------------------------

    def _run(self) -> None:
        stop = False
        while not stop:
            self._wake.wait(WAKE_SECONDS)
            self._wake.clear()  # before draining: a wake-up set after this finds its entry
            entries = self._drain_with_scalars()
            if not entries:
                continue
            try:
                stop = self._handle(entries)
            except Exception as err:  # a bug of ours: log it, keep writing, never hang a flush
                logger.error("the summary writer failed on %d entries: %r", len(entries), err)
                self.failed = True
                if self._error is None:
                    self._error = err
                self._count_lost(entries)
                markers = [entry for entry in entries if isinstance(entry, _Marker)]
                for marker in markers:
                    marker.done.set()
                stop = any(marker.stop for marker in markers)
        if self._pool is not None:
            self._pool.shutdown()

    def _count_lost(self, entries: list[StepBatch | ScalarBlock | _Marker]) -> None:
        """Release the memory bound held by entries that could not be written."""
        queued = [
            entry
            for entry in entries
            if isinstance(entry, StepBatch) or (isinstance(entry, ScalarBlock) and entry.queued)
        ]
        self._written_bytes += sum(entry.pending_bytes for entry in queued)
        self._written_batches += len(queued)
        self._progress.set()

    def _drain_with_scalars(self) -> list[StepBatch | ScalarBlock | _Marker]:
        """The queued entries, then the caller's scalar rows (newer than all of them).

        The rows are taken only under their lock, with the queue drained to its end in
        the same hold (see :class:`ScalarCollector`); while the caller holds the lock
        (handing rows over, perhaps waiting for room), only the queue is drained.
        """
        rows = self.scalar_rows
        if not rows.lock.acquire(blocking=False):
            return self._drain()
        try:
            entries = self._drain()
            last = entries[-1] if entries else None
            if len(entries) < MAX_DRAIN and not (isinstance(last, _Marker) and last.stop):
                block = rows.take()
                if block is not None:
                    block.queued = False
                    entries.append(block)
            return entries
        finally:
            rows.lock.release()

    def _drain(self) -> list[StepBatch | ScalarBlock | _Marker]:
        entries: list[StepBatch | ScalarBlock | _Marker] = []
        try:
            while len(entries) < MAX_DRAIN:
                entries.append(self._queue.get_nowait())
        except queue.Empty:
            pass
        else:
            self._wake.set()  # more is queued: come straight back
        return entries

    def _handle(self, entries: list[StepBatch | ScalarBlock | _Marker]) -> bool:
        """Write entries in order; answer markers once all before them are written.

        Runs of step batches are encoded together (their heavy values in parallel); the
        records of everything up to a marker go to each file in one append. True when
        asked to stop.
        """
        out = _Output()
        batches: list[StepBatch] = []
        for entry in entries:
            if isinstance(entry, StepBatch):
                batches.append(entry)
                continue
            self._encode_batches(batches, out)
            batches = []
            if isinstance(entry, ScalarBlock):
                self._encode_scalars(entry, out)
                continue
            self._append(out)
            out = _Output()
            if entry.stop:
                self._guard(self.summary_file.close, "close")
                self._guard(self.lineage_file.close, "close")
                if self.tensorboard_file is not None:
                    self._guard(self.tensorboard_file.close, "close")
            entry.done.set()
            if entry.stop:
                return True
        self._encode_batches(batches, out)
        self._append(out)
        return False

    def _encode_batches(self, batches: list[StepBatch], out: _Output) -> None:
        if not batches:
            return
        for batch, values in self._encode_values(batches):
            self._add_step(batch, values, out)
        out.pending_bytes += sum(batch.pending_bytes for batch in batches)
        out.batches += len(batches)

    def _encode_scalars(self, block: ScalarBlock, out: _Output) -> None:
        if len(block) and not kernels_ready():  # still compiling: protobuf writes them
            self._encode_scalars_with_protobuf(block, out)
        elif len(block):
            try:
                data, ends = encode_scalar_block(block, self.scalar_rows.tags, self.file_format)
            except Exception as err:  # the compiled encoder failed: the protobuf one writes
                log_once(
                    f"scalar-kernel:{type(err).__name__}",
                    logging.ERROR,
                    "the compiled scalar encoder failed (%r); scalar steps are written by the "
                    "slower protobuf encoder instead",
                    err,
                )
                self._encode_scalars_with_protobuf(block, out)
            else:
                out.add_summary_framed(data, ends)
        if block.queued:
            out.pending_bytes += block.pending_bytes
            out.batches += 1

    def _encode_scalars_with_protobuf(self, block: ScalarBlock, out: _Output) -> None:
        for step, wall, scalars in block.rows:
            items = [Item("scalar", tag, value) for tag, value in scalars.items()]
            self._add_step(StepBatch(step, wall, items), list(scalars.values()), out)

    def _append(self, out: _Output) -> None:
        """Write what ``out`` holds (one append per file) and count it as written."""
        if out.summary:
            data, ends = out.summary_framed()
            self._guard(lambda: self.summary_file.append_framed(data, ends), "write")
        if out.lineage:
            self._guard(lambda: self.lineage_file.append(out.lineage), "write")
        if out.tensorboard:
            self._guard(lambda: self._tensorboard_append(out.tensorboard), "write")
        if out.batches:
            self._written_bytes += out.pending_bytes
            self._written_batches += out.batches
            self._progress.set()

    def _tensorboard_append(self, payloads: list[bytes]) -> None:
        if self.tensorboard_file is None:
            raise RuntimeError("this record has no TensorBoard-format file for its events")
        self.tensorboard_file.append(payloads)

    def _encode_values(self, batches: list[StepBatch]) -> list[tuple[StepBatch, list[Any]]]:
        """Encode each item's value, on the pool when there is more than one heavy item and
        together they are big enough to be worth it (:data:`POOL_MIN_BYTES`)."""
        heavy = [item.held for batch in batches for item in batch.items if is_heavy(item)]
        use_pool = len(heavy) > 1 and sum(heavy) >= POOL_MIN_BYTES and self._workers > 1
        pool = self._pool
        if use_pool and pool is None:
            pool = self._pool = EncoderPool(self._workers)
        encode = self._encode
        started = [
            [
                pool.submit(functools.partial(encode, item))
                if pool is not None and use_pool and is_heavy(item)
                else item
                for item in batch.items
            ]
            for batch in batches
        ]
        return [
            (
                batch,
                [_finish(item, job, encode) for item, job in zip(batch.items, jobs, strict=True)],
            )
            for batch, jobs in zip(batches, started, strict=True)
        ]

    def _encode(self, item: Item) -> Any:
        """:func:`encode_value`, timing images (see :attr:`image_seconds`)."""
        if item.plugin != "image":
            return encode_value(item)
        start = time.perf_counter()
        try:
            return encode_value(item)
        finally:
            with self._image_lock:
                self.image_seconds += time.perf_counter() - start

    def _add_step(self, batch: StepBatch, values: list[Any], out: _Output) -> None:
        """Serialize one step into ``out`` (and export its tensors)."""
        export = self._export
        if export is not None:
            for item, value in zip(batch.items, values, strict=True):
                if item.export and value is not None:
                    self._guard(functools.partial(export, batch, item, value), "export")
        values = [v if item.summary else None for item, v in zip(batch.items, values, strict=True)]
        step = self._serialize(batch, values)
        for payload in step.summary:
            out.add_summary(encode_record(payload))
        out.lineage.extend(step.lineage)
        out.tensorboard.extend(step.tensorboard)

    def _serialize(self, batch: StepBatch, values: list[Any]) -> EncodedStep:
        """The step's events; should that fail, without the values that make it fail."""
        try:
            return self._encode_step(batch, values)
        except Exception:  # find the values at fault: each alone, the rest kept
            kept = list(values)
            for index, (item, value) in enumerate(zip(batch.items, values, strict=True)):
                if value is None:
                    continue
                try:
                    self._encode_step(StepBatch(batch.step, batch.wall_time, [item]), [value])
                except Exception as err:
                    _value_lost(item, err)
                    kept[index] = None
            return self._encode_step(batch, kept)

    def _guard(self, action: Callable[[], None], what: str) -> None:
        """Run a file action; log a failure once per cause and keep it for the caller."""
        try:
            action()
        except (OSError, RuntimeError, ValueError) as err:
            cause = f"{what}:{type(err).__name__}:{getattr(err, 'errno', '')}:{id(self)}"
            log_once(
                cause,
                logging.ERROR,
                "summary %s failed (later failures of this kind are not logged): %s",
                what,
                err,
            )
            if self._error is None:
                self._error = err
            self.failed = True
