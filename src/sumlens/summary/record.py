"""``SummaryRecord``: the writer users call on every training step.

It keeps MindSpore's API and file layout, and changes what made MindSpore's costly or
fragile: the training thread only validates and snapshots values and hands them to a
background pipeline (:mod:`sumlens.summary.pipeline`); several records may be open at
once; ``flush()`` waits until the data is readable; a forgotten ``close()`` still flushes
at exit and on SIGTERM; a full file rotates instead of dropping data.

Collaborators (``SummaryCollector``, the summary operators of :mod:`sumlens.ops`) use
its public surface: :meth:`~SummaryRecord.add_scalar`, :meth:`~SummaryRecord.discard_pending`,
:meth:`~SummaryRecord.add_operator_value` and the context-manager protocol that makes a
record the active one for the operators. Graph, lineage and landscape values arrive
through a value protocol (:mod:`sumlens.summary.messages`), so the writer imports none of
the packages built on it.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import math
import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sumlens._checks import (
    check_bool,
    check_callable,
    check_choice,
    check_int,
    check_module,
    check_number,
    check_str,
)
from sumlens._log import log_once, logger, warn_once
from sumlens._numba import prepare as prepare_kernels
from sumlens.io.naming import (
    check_affix,
    check_filename_suffix,
    current_rank,
    export_dir_name,
    hostname,
    lineage_file_name,
    summary_file_name,
    tensorboard_file_name,
)
from sumlens.summary import registry
from sumlens.summary.convert import (
    copy_to_host_async,
    host_view,
    is_cuda_tensor,
    snapshot,
    torch_numpy_dtype,
)
from sumlens.summary.destination import UPLOAD_SECS, open_destination
from sumlens.summary.device_histogram import SMALL_TENSOR, DeviceHistogram, device_statistics
from sumlens.summary.encoders import version_payload
from sumlens.summary.eventfile import EventFile, RecordTooLargeError
from sumlens.summary.export import NpyExporter, check_export_options
from sumlens.summary.file_size import check_max_file_size, header_bytes
from sumlens.summary.histogram import compiled_histogram
from sumlens.summary.image import nchw_shape
from sumlens.summary.items import TENSORBOARD_EVENT, Item, StepBatch
from sumlens.summary.kernels import WRITER_KERNELS, histogram_ready
from sumlens.summary.live_writers import check_new_file, live_files, say_shared
from sumlens.summary.messages import MESSAGE_PLUGINS, message_of
from sumlens.summary.pipeline import MAX_PENDING_BYTES, WriterPipeline
from sumlens.summary.scalar_block import ScalarCollector
from sumlens.summary.step_size import oversized, oversized_scalars
from sumlens.summary.tensor import check_tensor_dtype, check_tensor_shape
from sumlens.summary.values import check_name, check_real_dtype, value_dtype

TENSOR_PLUGINS = ("scalar", "image", "tensor", "histogram")
SIZED_PLUGINS = ("image", "tensor")
"""Plugins whose encoded size grows with the value (checked against the step's limit)."""
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
HAND_OVER_SECONDS = 1.0
"""How long a hand-over of scalar rows waits for their lock (see ``_hand_over``)."""
PLUGINS = TENSOR_PLUGINS + tuple(MESSAGE_PLUGINS)
FILE_FORMATS = ("mindspore", "tensorboard")
MODES = ("train", "eval")
MAX_STEP_BYTES = 2**31 - 1
"""Protobuf cannot serialize a message larger than this; one step's event must stay below."""
MAX_LOG_DIR_LENGTH = 1024
_PLAIN_NUMBERS = frozenset({float, int, np.float64, np.float32, np.float16, np.int64, np.int32})
"""Scalar values taken as they are (no snapshot needed: they are immutable)."""


class SummaryRecord:
    """Record scalars, images, tensors, histograms, graphs, lineage and landscapes of a run.

    Values are added with :meth:`add_value` (or by summary operators inside a model's
    ``forward``) and written as one event per :meth:`record` call, to
    ``<log_dir>/<file_prefix>.out.events.summary.<seconds>.<rank>.<host><file_suffix>``
    (lineage to the matching ``_lineage`` file). Use it as a context manager or call
    :meth:`close`; if you forget, exit and SIGTERM close it for you.

    ``num_process`` bounds the threads that encode images, histograms and tensors (Pillow,
    numpy and our kernels release the GIL, so threads work in parallel without copying
    data to other processes). ``max_file_size`` (bytes) rotates to a new summary file,
    named with the next free second, before one would exceed it (the lineage file, a few
    small records that MindInsight needs together, is not split); a step that no file of
    that size can hold is not written, and :meth:`record` says so at once. Two writers of
    one rank recording into one directory at once (MindInsight would mix their runs) get
    one warning (:mod:`sumlens.summary.live_writers`). ``raise_exception=True`` re-raises
    write errors (disk full, file too large ...) on your thread at the next call; otherwise
    they are logged once. ``export_options={"tensor_format": "npy"}`` also saves every
    tensor as a ``.npy`` file. ``file_format="tensorboard"`` writes TensorBoard event files
    instead (lineage still goes to the MindSpore lineage file), whose names end with
    ``filename_suffix``; a MindSpore-format record writes what only TensorBoard's format
    holds (:meth:`record_tensorboard_event`) to such a file beside. ``max_pending_bytes``
    bounds the memory held by values not yet written; beyond it, recording waits.

    ``log_dir`` may be a URL of object storage (``s3://bucket/run``, ``gs://``, ``az://``,
    any fsspec file system), with fsspec's ``storage_options`` (e.g. ``endpoint_url``,
    ``profile``, ``anon``): the files are written to a spool under ``spool_dir`` (default
    ``$SUMLENS_SPOOL_DIR`` or ``~/.cache/sumlens/spool``) and uploaded every
    ``upload_secs``, at :meth:`flush` and at :meth:`close`, in parts of a few MiB (objects
    cannot be appended to). A failed upload is retried; what :meth:`close` could not
    upload stays in the spool for ``sumlens upload``.

    Directories and files get the modes the umask leaves, as torch's writer and
    ``os.makedirs``/``open`` make them (0755 and 0644 under umask 022), and keep them when
    closed. ``owner_only=True`` makes them MindSpore's way, only their owner's: directories
    0700, files 0600 while written and 0400 once closed.
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str],
        file_prefix: str = "events",
        file_suffix: str = "_MS",
        num_process: int = 32,
        network: Any = None,
        max_file_size: int | None = None,
        raise_exception: bool = False,
        export_options: dict[str, str | None] | None = None,
        *,
        file_format: str = "mindspore",
        max_pending_bytes: int = MAX_PENDING_BYTES,
        filename_suffix: str = "",
        storage_options: Mapping[str, Any] | None = None,
        spool_dir: str | os.PathLike[str] | None = None,
        upload_secs: float = UPLOAD_SECS,
        owner_only: bool = False,
    ) -> None:
        check_affix("file_prefix", file_prefix)
        check_affix("file_suffix", file_suffix)
        check_filename_suffix(filename_suffix)
        owner = "SummaryRecord"
        raise_exception = check_bool(raise_exception, "raise_exception", owner)
        owner_only = check_bool(owner_only, "owner_only", owner)
        num_process = check_int(num_process, "num_process", owner, 1)
        file_format = check_choice(file_format, "file_format", owner, FILE_FORMATS)
        max_file_size = check_max_file_size(max_file_size, owner, file_format)
        max_pending_bytes = check_int(max_pending_bytes, "max_pending_bytes", owner, 1)
        self._export_options = check_export_options(export_options)
        check_module(network, "network", owner, allow_none=True)
        self._destination = destination = open_destination(
            log_dir, owner, MAX_LOG_DIR_LENGTH, storage_options, spool_dir, upload_secs, owner_only
        )
        directory, storage = destination.directory, destination.storage

        self.network = network
        self._max_file_size = max_file_size
        self._room = None if max_file_size is None else max_file_size - header_bytes(file_format)
        """Bytes a file holds besides its version record (None: no limit)."""
        self._graph: Any = None
        """A ``sumlens.graph.capturing.PendingGraph`` until the network's graph is written."""
        self._graph_done = False
        self._calls: Any = None
        """A ``sumlens.graph.capturing.OutermostCalls`` until the first ``record``: the
        inputs of a ``train_network`` called before it (see :meth:`_add_graph`)."""
        self.file_format = file_format
        self.raise_exception = raise_exception
        self._mode = "train"
        self._pool: dict[tuple[str, str], Item] = {}
        self._op_values: dict[tuple[str, str], Item] = {}
        self._scalars: dict[str, float] = {}
        self._scalar_steps = ScalarCollector()
        self.join_scalar: Callable[[int, str, float], bool] = self._scalar_steps.join
        """``join_scalar(step, tag, value)``: the hot path of torch's ``add_scalar``, for
        the API built on this record (:class:`sumlens.SummaryWriter`). It adds a Python
        float to the row that :meth:`record_value` opened for ``step``, if ``tag`` was given
        to :meth:`record_value` before and is new to that row, and says whether it did:
        False (the row was written, or the record closed) means give the value to
        :meth:`record_value`. Nothing else is checked: a write error is raised
        (``raise_exception``) at the next :meth:`record_value`."""
        self._closed = False
        self._said_closed = False
        self._forked = False
        self._tokens: list[contextvars.Token] = []
        seconds = int(time.time())
        rank, host = current_rank(), hostname()
        if file_format == "tensorboard":
            make_summary_name: Callable[[int], str] = lambda t: tensorboard_file_name(  # noqa: E731
                t, host, f".{rank}{filename_suffix}"
            )
        else:
            make_summary_name = lambda t: summary_file_name(  # noqa: E731
                t, file_prefix, file_suffix, rank, host
            )
        summary_file = EventFile(
            directory,
            make_summary_name,
            seconds,
            max_file_size,
            header=lambda: version_payload(file_format, time.time()),
            on_new_file=functools.partial(check_new_file, directory, rank),
            storage=storage,
            part_bytes=destination.part_bytes,
        )
        # No size limit for lineage: its few small records must stay in one file, since
        # MindInsight rejects a lineage file holding custom lineage data alone.
        lineage_file = EventFile(
            directory,
            lambda t: lineage_file_name(t, file_prefix, rank, host),
            seconds,
            None,
            storage=storage,
        )
        tensorboard_file = None
        if file_format != "tensorboard":  # for what only TensorBoard's format holds
            tensorboard_file = EventFile(
                directory,
                lambda t: tensorboard_file_name(t, host, f".{rank}{filename_suffix}"),
                seconds,
                None,
                header=lambda: version_payload("tensorboard", time.time()),
                storage=storage,
                part_bytes=destination.part_bytes,
            )
        exporter = None
        if self._export_options.get("tensor_format") == "npy":
            exporter = NpyExporter(directory / export_dir_name(seconds), owner_only)
        prepare_kernels()  # before the writer thread exists (see sumlens._numba)
        WRITER_KERNELS.start()  # compiled off this thread; plain paths meanwhile
        self._pipeline = WriterPipeline(
            file_format,
            summary_file,
            lineage_file,
            workers=max(1, min(num_process, os.cpu_count() or 1)),
            tensorboard_file=tensorboard_file,
            export=exporter,
            max_pending_bytes=max_pending_bytes,
            scalar_rows=self._scalar_steps,
        )
        self._directory, self._rank = directory, rank
        self._say_if_shared()
        registry.register(self, after_fork=SummaryRecord._disable_after_fork)
        if network is not None:
            self._watch_network(network)
        elif "torch" in sys.modules:  # a model of this run may be called before record()
            from sumlens.graph.capturing import OutermostCalls

            self._calls = OutermostCalls()

    def _say_if_shared(self) -> None:
        """Warn if another writer of this rank records into this directory now: an open
        record of this process, or a live writer's file (:mod:`sumlens.summary.live_writers`;
        checked again by each new file this record writes)."""
        directory, rank = self._directory, self._rank
        if any(r._directory == directory and r._rank == rank for r in registry.open_records()):
            say_shared(directory, rank, "another SummaryRecord of this process")
            return
        others = live_files(directory, rank)
        if others:
            say_shared(directory, rank, f"in another process: its {others[0].name} is open")

    # ---- properties ----------------------------------------------------------------------

    @property
    def log_dir(self) -> str:
        """Full path of the summary file (the name it will get, before the first write);
        its URL when the record writes to object storage."""
        return self._destination.location(self._pipeline.summary_file.expected_path)

    @property
    def local_dir(self) -> str:
        """The local directory the files are written in: the log directory, or for a URL
        the spool that is uploaded to it (for files a collaborator writes beside)."""
        return os.fspath(self._directory)

    @property
    def is_open(self) -> bool:
        """True until :meth:`close` (and never in a forked child)."""
        return not (self._closed or self._forked)

    @property
    def pending_bytes(self) -> int:
        """Estimated bytes of values handed to the writer and not yet on disk.

        What ``max_pending_bytes`` bounds; a caller that would rather skip a value than
        wait for the writer (see ``SummaryCollector``'s input images) reads it first.
        """
        return self._pipeline.pending_bytes

    @property
    def image_seconds(self) -> float:
        """Seconds the writer has spent encoding images (PNG) for this record so far.

        A caller that would rather skip an image than have its encoding slow training
        (``SummaryCollector``'s input images) weighs it against the time that passed.
        """
        return self._pipeline.image_seconds

    @property
    def mode(self) -> str:
        """``"train"`` or ``"eval"`` (see :meth:`set_mode`)."""
        return self._mode

    # ---- adding values -------------------------------------------------------------------

    def add_value(self, plugin: str, name: str, value: Any, *, dataformats: str = "NCHW") -> None:
        """Add a value to be written at the next :meth:`record`.

        ``plugin`` is one of scalar, image, tensor, histogram (array-like values: numpy,
        Python numbers, torch/JAX/MindSpore tensors), graph (GraphProto), train_lineage,
        eval_lineage, dataset_graph, custom_lineage_data (builders of
        :mod:`sumlens.lineage` or their messages) or landscape
        (:class:`~sumlens.landscape.LossLandscape`); case does not matter. A value of
        the last six may be any object with that ``plugin`` attribute and a ``to_proto()``
        method returning the message (see :mod:`sumlens.summary.messages`). The value is
        copied now: later in-place changes do not alter what is written. The same name
        twice before a record keeps the newest value (with one warning). ``dataformats``
        gives an image's layout (NCHW, NHWC, CHW, HWC or HW).
        """
        if plugin == "scalar" and type(name) is str and name and name.isascii():  # the hot path
            number = _plain_scalar(value)
            if number is not None:
                self.add_scalar(name, number)
                return
        key = check_choice(plugin, "plugin", "SummaryRecord.add_value", PLUGINS, ignore_case=True)
        if not self.is_open:
            self._say_closed(f"add_value({key!r}, {name!r})")
            return
        item = self._make_item(key, name, value, dataformats)
        if key == "scalar" and isinstance(item.value, float):
            self.add_scalar(name, item.value)
        else:
            self._put(self._pool, item, "add_value")

    def add_scalar(self, tag: str, value: float) -> None:
        """Keep one scalar for the next :meth:`record`, in the scalar fast lane.

        For collaborators that call it on every step (``SummaryCollector``'s loss and
        learning rate): nothing is checked or converted, so ``tag`` must be a non-empty
        ASCII str and ``value`` a Python float (or int); give anything else to
        :meth:`add_value`, which checks it and takes this path for plain numbers. The
        same tag twice before a record keeps the newest value (with one warning).
        """
        if self._closed or self._forked:
            self._say_closed(f"add_value('scalar', {tag!r})")
            return
        if tag in self._scalars:
            warn_once(
                f"duplicate:add_value:scalar:{tag}",
                "'%s/scalar' was given twice before record(); only the newest value is written",
                tag,
            )
        self._scalars[tag] = value

    def _put(self, pool: dict[tuple[str, str], Item], item: Item, source: str) -> None:
        slot = (item.plugin, item.tag)
        if slot in pool:
            warn_once(
                f"duplicate:{source}:{slot}",
                "'%s/%s' was given twice before record(); only the newest value is written",
                item.tag,
                item.plugin,
            )
        pool[slot] = item

    def _say_closed(self, call: str) -> None:
        """Say once per record that what is given to it after ``close()`` is not written
        (``add_value``, ``record`` and ``flush`` alike: a loop that goes on after the close
        would otherwise log a line per call)."""
        if self._forked or self._said_closed:  # a forked child: the parent records
            return
        self._said_closed = True
        logger.error(
            "%r is closed; %s wrote nothing, and later calls to it write nothing either "
            "(not logged again)",
            self,
            call,
        )

    def _make_item(
        self, plugin: str, name: Any, value: Any, dataformats: str = "NCHW", alone: bool = False
    ) -> Item:
        """A checked item; ``alone``: it will be an event of its own (its whole budget)."""
        if plugin in TENSOR_PLUGINS:
            check_str(name, "name", "SummaryRecord.add_value", non_empty=True)
            check_name(name, plugin)
            # Only images and tensors grow with their value; the rest have a fixed size.
            sized = plugin in SIZED_PLUGINS and not alone
            budget = self._budget((plugin, name)) if sized else None
            return _tensor_item(plugin, name, value, dataformats, self._export_options, budget)
        tag = str(name)
        check_name(tag, plugin)
        return Item(plugin, tag, message_of(plugin, value))

    def _budget(self, slot: tuple[str, str]) -> int:
        """Estimated bytes a new value for ``slot`` may take so that its step stays writable.

        Checked before the value is copied, so a value that could never be written costs
        no memory. In MindSpore's format the values already added for the step (but not
        the one this value replaces) share the limit; in TensorBoard's each value is an
        event of its own.
        """
        if self.file_format == "tensorboard":
            return MAX_STEP_BYTES
        others = sum(item.nbytes for key, item in self._pool.items() if key != slot)
        return MAX_STEP_BYTES - StepBatch(0, 0.0).nbytes - others

    # ---- one value at a time -------------------------------------------------------------

    def record_value(
        self,
        plugin: str,
        name: str,
        value: Any,
        step: int,
        wall_time: float | None = None,
        *,
        dataformats: str = "NCHW",
    ) -> bool:
        """Write one value now, at ``step`` and ``wall_time`` (default: now), apart from
        the values waiting for the next :meth:`record`.

        The style of torch's ``SummaryWriter`` (each call its own step; steps may
        interleave between tags), at this record's cost: the value is checked and copied
        as :meth:`add_value` does it, plain numbers take the scalar fast lane (where a
        step's scalars given one after another share one row, as :meth:`record` gives
        them: :meth:`~sumlens.summary.scalar_block.ScalarCollector.add_value`), and a
        CUDA tensor is copied without waiting for the device. Returns what
        :meth:`record` returns.
        """
        owner = "SummaryRecord.record_value"
        if type(step) is not int or not INT64_MIN <= step <= INT64_MAX:
            step = check_int(step, "step", owner, INT64_MIN, maximum=INT64_MAX)
        given = None if wall_time is None else self._wall_time(wall_time, owner)
        if self._closed or self._forked:  # said once; the call is only named then
            return self._writable(f"record_value({plugin!r}, {name!r})")
        self._raise_pending()
        number = None
        if plugin == "scalar" and type(name) is str and name and name.isascii():  # hot path
            number = value if type(value) is float else _plain_scalar(value)
            if number is not None and self._room is None:
                if self._scalar_steps.add_value(step, given, name, number):
                    self._hand_over()
                return not self._pipeline.failed
        wall = time.time() if given is None else given
        if number is not None:  # size-bound files: a row of its own, checked
            return self._scalar_row(step, wall, {name: number})
        key = check_choice(plugin, "plugin", owner, PLUGINS, ignore_case=True)
        item = self._make_item(key, name, value, dataformats, alone=True)
        if key == "scalar" and isinstance(item.value, float):
            return self._scalar_row(step, wall, {name: item.value})
        return self._write_alone(StepBatch(step, wall, [item]))

    def record_tensorboard_event(
        self,
        event: Any,
        step: int,
        wall_time: float | None = None,
        *,
        nbytes: int | None = None,
        held: int = 0,
    ) -> bool:
        """Write a prepared TensorBoard ``Event`` (``sumlens._proto.tensorboard_pb2``: a
        summary of a plugin, a graph, run metadata) at ``step`` and ``wall_time``.

        ``event`` may also be a function returning the event, called on the writer thread
        (the costly part of a value, such as binning a histogram, then costs the caller
        nothing); ``nbytes`` then estimates the event's size and ``held`` the memory its
        inputs hold until then. For what only TensorBoard's format holds (text, audio, PR
        curves, hyper-parameters ...): a MindSpore-format record writes it to a
        TensorBoard-format file in the same directory, so nothing is dropped. Returns what
        :meth:`record` returns.
        """
        owner = "SummaryRecord.record_tensorboard_event"
        deferred = callable(event)
        if not deferred and not (hasattr(event, "SerializeToString") and hasattr(event, "step")):
            raise TypeError(
                f"{owner}: event must be a TensorBoard Event message or a function returning "
                f"one, got {event!r:.100}"
            )
        step = check_int(step, "step", owner, INT64_MIN, maximum=INT64_MAX)
        wall = self._wall_time(wall_time, owner)
        if not self._writable("record_tensorboard_event()"):
            return False
        size = check_int(nbytes, "nbytes", owner, 0, allow_none=True)
        if size is None:
            size = 4096 if deferred else event.ByteSize()
        item = Item(TENSORBOARD_EVENT, "event", event, nbytes=size + 32, held=held)
        return self._write_alone(StepBatch(step, wall, [item]))

    @staticmethod
    def _wall_time(wall_time: float | None, owner: str) -> float:
        if wall_time is None:
            return time.time()
        return float(check_number(wall_time, "wall_time", owner, 0.0))

    def _writable(self, call: str) -> bool:
        """Whether values can be written now (a closed record says so once)."""
        if self._forked:
            return False
        if self._closed:
            self._say_closed(call)
            return False
        self._raise_pending()
        return True

    def _scalar_row(self, step: int, wall: float, scalars: dict[str, float]) -> bool:
        """Hand ``scalars`` of ``step`` to the scalar fast lane (those too large for
        ``max_file_size`` are said and dropped)."""
        too_large: list[str] = []
        least = 0
        if self._room is not None:
            too_large, least = oversized_scalars(step, scalars, self.file_format, self._room)
            for tag in too_large:
                del scalars[tag]
        if scalars and self._scalar_steps.add_step(step, wall, scalars):
            self._hand_over()
        if too_large:
            return self._too_large(step, [f"{t}/scalar" for t in too_large], least)
        return not self._pipeline.failed

    def _write_alone(self, batch: StepBatch) -> bool:
        """Queue a batch of its own (not the pending step's), checked for size first."""
        if self._room is not None:
            oversize, least = oversized(batch.items, batch.step, self.file_format, self._room)
            if oversize:
                return self._too_large(batch.step, [f"{o.tag}/{o.plugin}" for o in oversize], least)
        self._check_size(batch)
        self._hand_over(batch)
        return not self._pipeline.failed

    # ---- summary operators -----------------------------------------------------------------

    def add_operator_value(self, plugin: str, name: str, value: Any) -> None:
        """Keep a summary operator's value for the next train-mode :meth:`record`.

        The sink of :mod:`sumlens.ops` (``plugin``: scalar, image, tensor or histogram,
        lower case). In eval mode, and once the record is closed, the value is dropped
        at once. The caller decides whether operators record at all (``sumlens.ops``
        records nothing while a graph capture runs the model on fake tensors).
        """
        if self._mode != "train" or not self.is_open:
            return
        if not isinstance(name, str) or not name:
            raise TypeError(f"summary operator name must be a non-empty str, got {name!r}")
        check_name(name, plugin)
        self._put(
            self._op_values,
            _tensor_item(plugin, name, value, "NCHW", self._export_options),
            "operator",
        )

    # ---- recording -------------------------------------------------------------------------

    def record(
        self,
        step: int,
        train_network: Any = None,
        plugin_filter: Callable[[str], bool] | None = None,
    ) -> bool:
        """Write everything added since the last call as the values of ``step``.

        Returns immediately (the writing happens in the background); False if the record
        is closed, and from the first failed write on (a full disk ...: logged once, and
        raised here with ``raise_exception=True``), since what was recorded is then not
        all on disk; later steps are still written where they can be. A step whose record
        surely cannot fit ``max_file_size`` (:mod:`sumlens.summary.step_size`) is not
        written and said at once: False (logged once), or raised here. In train mode,
        values from summary operators are written too; in eval mode they are discarded.
        ``plugin_filter(plugin)`` returning False drops that plugin's values of this step.

        The graph of ``network`` (or, without one, of the first ``train_network`` given
        here) is written once, with the first record after the network's first forward
        call (whose inputs serve as the example; a ``train_network`` first given after
        its call, at the record's first ``record``, is captured from that call): that
        record takes as long as the capture (see :mod:`sumlens.graph`), later ones are
        not slowed.
        """
        owner = "SummaryRecord.record"
        step = check_int(step, "step", owner, INT64_MIN, maximum=INT64_MAX)  # the format's range
        check_module(train_network, "train_network", owner, allow_none=True)
        check_callable(plugin_filter, "plugin_filter", owner, allow_none=True)
        if self._forked:
            return False
        if self._closed:
            self._say_closed(f"record({step})")
            return False
        self._raise_pending()
        if not self._graph_done:
            self._add_graph(train_network)
        self.stop_keeping_calls()
        wall = time.time()
        scalars = self._scalars
        if plugin_filter is not None and scalars and not plugin_filter("scalar"):
            scalars.clear()
        if not self._pool and not (self._op_values and self._mode == "train"):
            self._op_values.clear()
            if scalars:  # only plain scalars this step: the fast lane, one row appended
                self._scalars = {}
                return self._scalar_row(step, wall, scalars)
            return not self._pipeline.failed
        pool, self._pool = self._pool, {}
        ops, self._op_values = self._op_values, {}
        if self._mode == "train":
            pool.update(ops)
        items = [Item("scalar", name, value) for name, value in scalars.items()]
        scalars.clear()
        items += pool.values()
        if plugin_filter is not None:
            items = [item for item in items if plugin_filter(item.plugin)]
        oversize: list[Item] = []
        least = 0
        if self._room is not None:
            oversize, least = oversized(items, step, self.file_format, self._room)
            for item in oversize:  # an exported tensor is still exported (not size-bound)
                item.summary = False
            items = [item for item in items if item.summary or item.export]
        batch = StepBatch(step, wall, items)
        self._check_size(batch)
        self._hand_over(batch if items else None)
        if oversize:
            return self._too_large(step, [f"{o.tag}/{o.plugin}" for o in oversize], least)
        return not self._pipeline.failed

    def _too_large(self, step: int, names: list[str], least: int) -> bool:
        """Say that ``names`` of ``step`` cannot fit any file (once per record; raised
        with ``raise_exception=True``); False, ``record()``'s answer for that step."""
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        message = (
            f"step {step}: the record of {shown} needs at least {least} bytes, more than "
            f"max_file_size={self._max_file_size} holds besides the file's "
            f"{self._max_file_size - self._room}-byte version record; not written "
            "(raise max_file_size, or record fewer or smaller values per step)"
        )
        if self.raise_exception:
            raise RecordTooLargeError(message)
        log_once(
            f"record-too-large:{id(self)}",
            logging.ERROR,
            "%s; record() returns False for such steps (later ones are not logged)",
            message,
        )
        return False

    def _watch_network(self, network: Any) -> None:
        """Keep the inputs of ``network``'s first forward call, to capture its graph: a
        call already made while this record was open (held since its creation), else
        the next one."""
        # Imported here, not above: sumlens.graph needs torch, which the writer does not
        # load. ``network`` is a torch Module, so torch is loaded by now.
        from sumlens.graph.capturing import PendingGraph

        inputs = None if self._calls is None else self._calls.inputs_of(network)
        self._graph = PendingGraph(network, inputs)

    def stop_keeping_calls(self) -> None:
        """Keep no earlier forward calls for a ``train_network`` given to :meth:`record`
        (its graph then comes from its next call).

        Until its first ``record``, a record keeps the inputs of each model's first call,
        so that a network given only then is captured at once; every module call costs a
        little more meanwhile. A collaborator that captures the graph by itself
        (``SummaryCollector``) calls this right away.
        """
        if self._calls is not None:
            self._calls.release()
            self._calls = None

    def _add_graph(self, train_network: Any) -> None:
        """Add the network's graph to this step once its first forward call has happened.

        A ``train_network`` given at the first ``record`` after its forward call (as
        MindSpore's one-shot usage does) is captured at once, from that call's inputs;
        given later, from its next call. Captured on this thread: ``torch.export``
        briefly swaps the live module's parameters for fake tensors, which must not
        happen while another thread trains it.
        """
        if self._graph is None:
            if train_network is None:
                return
            self._watch_network(train_network)
        if not self._graph.ready():
            return
        pending, self._graph = self._graph, None
        self._graph_done = True
        try:
            result = pending.build()
        except Exception as err:  # a bug of ours must not stop training
            logger.error("could not build the graph of %s: %r", type(pending.network).__name__, err)
            return
        logger.info(
            "graph of %s captured (%s) in %.2f s",
            type(pending.network).__name__,
            result.path,
            result.seconds,
        )
        self._put(self._pool, Item("graph", "graph", result.graph), "add_value")

    def discard_pending(self) -> None:
        """Drop every value added since the last :meth:`record`, writing nothing.

        For a step the caller decided not to keep (``SummaryCollector`` between collected
        steps): what ``record(step, plugin_filter=lambda _: False)`` does, without its
        per-step cost.
        """
        self._pool.clear()
        self._scalars.clear()  # a dict handed over with a row is never the current one
        self._op_values.clear()

    def _hand_over(self, batch: StepBatch | None = None) -> None:
        """Queue the waiting scalar rows, then ``batch``: in recording order (see
        :class:`~sumlens.summary.scalar_block.ScalarCollector`).

        A signal handler that interrupted this thread while it held the lock would wait
        for itself: after :data:`HAND_OVER_SECONDS` it goes on without the lock.
        """
        lock = self._scalar_steps.lock
        locked = lock.acquire(timeout=HAND_OVER_SECONDS)
        try:
            block = self._scalar_steps.take()
            if block is not None:
                self._pipeline.submit(block)
            if batch is not None:
                self._pipeline.submit(batch)
        finally:
            if locked:
                lock.release()

    def _check_size(self, batch: StepBatch) -> None:
        per_event = batch.items if self.file_format == "tensorboard" else [batch]
        for part in per_event:
            if part.nbytes > MAX_STEP_BYTES:
                raise ValueError(
                    f"step {batch.step}: about {part.nbytes} bytes of values in one event, over "
                    f"the {MAX_STEP_BYTES}-byte limit of a protobuf message; record fewer or "
                    "smaller values per step"
                )

    def set_mode(self, mode: str) -> None:
        """``"train"`` (summary-operator values are written) or ``"eval"`` (they are discarded)."""
        if mode not in MODES:
            raise ValueError(f"mode={mode!r} is not one of {MODES}")
        self._mode = mode

    def flush(self) -> None:
        """Return once everything recorded so far is readable by other processes."""
        if self._forked:
            return
        if self._closed:
            self._say_closed("flush() (it can not flush)")
            return
        self._hand_over()
        self._pipeline.flush()
        self._destination.flush()
        self._raise_pending()

    def close(self, timeout: float | None = None) -> None:
        """Write everything and close the files (0400 with ``owner_only``); later calls do
        nothing."""
        if self._closed or self._forked:
            return
        self._closed = True
        registry.unregister(self)
        self.stop_keeping_calls()
        if self._graph is not None:
            self._say_no_graph()
            self._graph.cancel()
            self._graph = None
        self._hand_over()
        # Another thread recording right now may have passed the closed check just before
        # it was set: the flush lets it finish that call, the second hand-over takes its row.
        started = time.monotonic()

        def left() -> float | None:
            return None if timeout is None else max(0.0, timeout - (time.monotonic() - started))

        self._pipeline.flush(timeout)
        self._hand_over()
        if not self._pipeline.close(left()):
            logger.error("closing the summary writer timed out after %s s", timeout)
        not_uploaded = self._destination.close(left())
        if not_uploaded is not None:
            logger.error("%s", not_uploaded)
            if self.raise_exception:
                raise not_uploaded
        self._raise_pending()

    def _say_no_graph(self) -> None:
        """Warn that the network's graph was never written (closing before it could be)."""
        network = type(self._graph.network).__name__
        if self._graph.ready():
            reason = "no record() call followed its first forward call"
        else:
            reason = "it was never called"
        logger.warning("%r: no graph of network %s was written: %s", self, network, reason)

    def _raise_pending(self) -> None:
        """Raise the first write error since the last call, with ``raise_exception=True``
        (otherwise it was logged, and :meth:`record` answers False)."""
        if self.raise_exception:
            error = self._pipeline.take_error()
            if error is not None:
                raise error

    def _disable_after_fork(self) -> None:
        """In a forked child: never write, never wait (the writer thread stayed in the parent)."""
        self._forked = True
        self._graph_done = True
        if self._calls is not None:  # the child's hooks are gone already (at its fork)
            self._calls.abandon()
            self._calls = None
        self._pool, self._op_values, self._scalars = {}, {}, {}
        self._scalar_steps.reset_after_fork()

    # ---- context manager -------------------------------------------------------------------

    def __enter__(self) -> SummaryRecord:
        """Make this the active record for summary operators in this context (the
        innermost entered one wins); leaving closes it. A collaborator that keeps it
        entered across calls holds it in a ``contextlib.ExitStack``."""
        if self._closed:
            raise ValueError("SummaryRecord has been closed.")
        self._tokens.append(registry.enter(self))
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._tokens:
            registry.leave(self._tokens.pop())
        self.close()

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"SummaryRecord({self.log_dir!r}, {state})"


def _plain_scalar(value: Any) -> float | None:
    """``value`` as a float if that is cheap and safe now (a number, a one-element CPU tensor)."""
    kind = type(value)
    if kind in _PLAIN_NUMBERS:
        return float(value)
    torch = sys.modules.get("torch")
    if torch is not None and kind is torch.Tensor and value.is_cpu and value.numel() == 1:
        try:
            return float(value.item())
        except TypeError:  # a complex number: refused by the checks of the slow path
            return None
    return None


def _tensor_item(
    plugin: str,
    name: str,
    value: Any,
    dataformats: str,
    export_options: dict[str, Any],
    budget: int | None = None,
) -> Item:
    """Validate and snapshot an array-like value for ``plugin``.

    ``budget`` (default: the whole :data:`MAX_STEP_BYTES`) bounds the estimated encoded
    size; it is checked from the shape alone, before anything is copied, as is the dtype.
    """
    if plugin != "tensor":  # tensors take more dtypes; checked below, on the snapshot
        check_real_dtype(value_dtype(value), plugin, name)
    shape = _shape_of(value, name)
    size = math.prod(shape)
    budget = MAX_STEP_BYTES if budget is None else budget
    if plugin == "scalar":
        if size != 1:
            raise ValueError(f"scalar {name!r} must hold exactly one value, got shape {shape}")
        if isinstance(value, int | float) and not isinstance(value, bool):
            return Item(plugin, name, float(value))
        if not is_cuda_tensor(value) and hasattr(value, "item"):
            return Item(plugin, name, float(value.item()))
        return Item(plugin, name, snapshot(value, name))
    if plugin == "image":
        n, channels, height, width = nchw_shape(shape, dataformats, name)
        nbytes = _check_budget(plugin, name, n * channels * height * width + 1024, budget)
        pixels = snapshot(value, name)
        return Item(plugin, name, (pixels, dataformats.upper()), nbytes=nbytes, held=pixels.nbytes)
    if not shape:
        raise ValueError(f"{plugin} {name!r} must have at least one dimension, got a 0-d value")
    if plugin == "histogram":
        if is_cuda_tensor(value) and size > SMALL_TENSOR:
            packed = copy_to_host_async(device_statistics(value))
            return Item(plugin, name, DeviceHistogram(packed, torch_numpy_dtype(value), size))
        host = host_view(value)
        if host is not None and histogram_ready(host.dtype):  # cheaper than a copy to bin
            return Item(plugin, name, compiled_histogram(host), nbytes=4096)
        array = snapshot(value, name)
        return Item(plugin, name, array, nbytes=4096, held=array.nbytes)
    check_tensor_shape(shape, name)
    nbytes = _check_budget(plugin, name, 4 * size + 64, budget)
    array = snapshot(value, name)
    check_tensor_dtype(array.dtype, name)
    export = export_options.get("tensor_format") == "npy"
    return Item(plugin, name, array, nbytes=nbytes, export=export, held=array.nbytes)


def _check_budget(plugin: str, name: str, nbytes: int, budget: int) -> int:
    """Return ``nbytes``; raise ``ValueError`` if it exceeds what the step has left."""
    if nbytes > budget:
        raise ValueError(
            f"{plugin} {name!r} would take about {nbytes} bytes, which puts its step over the "
            f"{MAX_STEP_BYTES}-byte limit of a protobuf message; record fewer or smaller "
            "values per step"
        )
    return nbytes


def _shape_of(value: Any, name: str) -> tuple[int, ...]:
    if isinstance(value, bool | int | float):
        return ()
    shape = getattr(value, "shape", None)
    if shape is None:
        snapshot(value, name)  # raises the TypeError that names what is accepted
        shape = np.shape(value)
    return tuple(int(s) for s in shape)
