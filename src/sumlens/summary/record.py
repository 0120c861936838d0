"""``SummaryRecord``: the writer users call on every training step.

It keeps MindSpore's API and file layout, and changes what made MindSpore's costly or
fragile: the training thread only validates and snapshots values and hands them to a
background pipeline (:mod:`sumlens.summary.pipeline`); several records may be open at
once; ``flush()`` waits until the data is readable; a forgotten ``close()`` still flushes
at exit and on SIGTERM; a full file rotates instead of dropping data.

The record is a front over parts with one job each: the intake checks and converts every
value (:mod:`~sumlens.summary.intake`), the scalar lane takes every scalar
(:mod:`~sumlens.summary.scalar_lane`), the pending step keeps what the next ``record()``
writes (:mod:`~sumlens.summary.pending_step`), the network's graph is captured once
(:mod:`~sumlens.summary.network_graph`); the pipeline's ``submit`` is the one way to the
writer thread. Graph, lineage and landscape values come as a value protocol
(:mod:`sumlens.summary.messages`): the writer imports no package built on it.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable, Mapping
from typing import Any

from sumlens._checks import check_bool, check_callable, check_choice, check_int, check_module
from sumlens.io.naming import check_affix, check_filename_suffix, current_rank
from sumlens.summary import registry
from sumlens.summary.destination import UPLOAD_SECS, open_destination
from sumlens.summary.export import check_export_options
from sumlens.summary.file_size import check_max_file_size
from sumlens.summary.intake import Intake, checked_plugin, checked_step, checked_wall, plain_scalar
from sumlens.summary.items import StepBatch
from sumlens.summary.live_writers import say_if_shared
from sumlens.summary.network_graph import NetworkGraph
from sumlens.summary.pending_step import PendingStep
from sumlens.summary.pipeline import MAX_PENDING_BYTES
from sumlens.summary.record_files import open_files
from sumlens.summary.record_state import RecordState
from sumlens.summary.scalar_lane import ScalarLane
from sumlens.summary.size_bound import size_bound

FILE_FORMATS = ("mindspore", "tensorboard")
MODES = ("train", "eval")
MAX_LOG_DIR_LENGTH = 1024


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
        export_options = check_export_options(export_options)
        check_module(network, "network", owner, allow_none=True)
        destination = open_destination(
            log_dir, owner, MAX_LOG_DIR_LENGTH, storage_options, spool_dir, upload_secs, owner_only
        )
        self.network = network
        self.file_format = file_format
        self.raise_exception = raise_exception
        self._mode = "train"
        self._tokens: list[contextvars.Token] = []
        self._directory, self._rank = destination.directory, current_rank()
        self._files = open_files(
            destination,
            self._rank,
            file_format=file_format,
            file_prefix=file_prefix,
            file_suffix=file_suffix,
            filename_suffix=filename_suffix,
            max_file_size=max_file_size,
            num_process=num_process,
            max_pending_bytes=max_pending_bytes,
            export_options=export_options,
            owner_only=owner_only,
        )
        self._pipeline = pipeline = self._files.pipeline
        self._state = state = RecordState(pipeline, raise_exception, self._files.location)
        self._intake = intake = Intake(file_format, export_options)
        bound = size_bound(max_file_size, file_format, raise_exception)
        self.scalar_lane = ScalarLane(pipeline, state, intake, bound)
        """``put(step, wall_time, tag, value)``: :meth:`record_value` of a scalar in one
        call, as ``SummaryWriter.add_scalar`` makes it (:mod:`~sumlens.summary.scalar_lane`)."""
        self._pending = PendingStep(pipeline, state, self.scalar_lane, intake, bound)
        place = (self._directory, self._rank)
        records = [r for r in registry.open_records() if isinstance(r, SummaryRecord)]
        say_if_shared(*place, any((r._directory, r._rank) == place for r in records))
        registry.register(self, after_fork=SummaryRecord._disable_after_fork)
        self._graph = NetworkGraph(network)

    # ---- properties ----------------------------------------------------------------------

    @property
    def log_dir(self) -> str:
        """Full path of the summary file (the name it will get, before the first write);
        its URL when the record writes to object storage."""
        return self._files.location()

    @property
    def local_dir(self) -> str:
        """The local directory the files are written in: the log directory, or for a URL
        the spool that is uploaded to it (for files a collaborator writes beside)."""
        return os.fspath(self._directory)

    @property
    def is_open(self) -> bool:
        """True until :meth:`close` (and never in a forked child)."""
        return self._state.is_open

    @property
    def pending_bytes(self) -> int:
        """Estimated bytes handed to the writer and not yet on disk (``max_pending_bytes``
        bounds them; a caller may skip a value rather than wait)."""
        return self._pipeline.pending_bytes

    @property
    def image_seconds(self) -> float:
        """Seconds the writer has spent encoding images (PNG) for this record so far."""
        return self._pipeline.image_seconds

    @property
    def mode(self) -> str:
        """``"train"`` or ``"eval"`` (see :meth:`set_mode`)."""
        return self._mode

    # ---- the next step's values ----------------------------------------------------------

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
        number = plain_scalar(plugin, name, value)
        if number is not None:  # the hot path
            self._pending.add_scalar(name, number)
            return
        key = checked_plugin(plugin, "SummaryRecord.add_value")
        if not self._state.is_open:
            self._state.say_closed("add_value(%r, %r)", key, name)
            return
        self._pending.add(self._intake.item(key, name, value, dataformats, self._pending.values))

    def add_scalar(self, tag: str, value: float) -> None:
        """Keep one scalar for the next :meth:`record`, unchecked: ``tag`` must be a
        non-empty ASCII str and ``value`` a Python float (or int); :meth:`add_value` checks
        anything else, and takes this path for plain numbers."""
        self._pending.add_scalar(tag, value)

    def add_operator_value(self, plugin: str, name: str, value: Any) -> None:
        """Keep a summary operator's value for the next train-mode :meth:`record`.

        The sink of :mod:`sumlens.ops` (``plugin``: scalar, image, tensor or histogram,
        lower case). In eval mode, and once the record is closed, the value is dropped
        at once. The caller decides whether operators record at all (``sumlens.ops``
        records nothing while a graph capture runs the model on fake tensors).
        """
        if self._mode != "train" or not self._state.is_open:
            return
        self._pending.add_operator_value(self._intake.operator_item(plugin, name, value))

    def discard_pending(self) -> None:
        """Drop every value added since the last :meth:`record`, writing nothing: what
        ``record(step, plugin_filter=lambda _: False)`` does, without its per-step cost
        (``SummaryCollector`` between collected steps)."""
        self._pending.discard()

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
        call (see :mod:`~sumlens.summary.network_graph`): that record takes as long as the
        capture (see :mod:`sumlens.graph`), later ones are not slowed.
        """
        owner = "SummaryRecord.record"
        step = checked_step(step, owner)
        check_module(train_network, "train_network", owner, allow_none=True)
        check_callable(plugin_filter, "plugin_filter", owner, allow_none=True)
        if not self._state.writable("record(%d)", step):
            return False
        graph = self._graph.take(train_network)
        if graph is not None:
            self._pending.add(graph)
        return self._pending.write(step, self._mode == "train", plugin_filter)

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
        the values waiting for the next :meth:`record`; returns what :meth:`record` returns.

        The style of torch's ``SummaryWriter`` (each call its own step; steps may
        interleave between tags), at this record's cost: the value is checked and copied
        as :meth:`add_value` does it, scalars take the scalar lane (where a step's scalars
        given one after another share one row, as :meth:`record` gives them), and a CUDA
        tensor is copied without waiting for the device.
        """
        if plugin == "scalar":
            return self.scalar_lane.put(step, wall_time, name, value)
        owner = "SummaryRecord.record_value"
        step = checked_step(step, owner)
        wall = checked_wall(wall_time, owner)
        if not self._state.writable("record_value(%r, %r)", plugin, name):
            return False
        key = checked_plugin(plugin, owner)
        if key == "scalar":  # spelled in another case
            return self.scalar_lane.put(step, wall, name, value)
        item = self._intake.item(key, name, value, dataformats)
        return self._pending.write_alone(StepBatch(step, wall, [item]))

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
        summary of a plugin, a graph, run metadata) at ``step`` and ``wall_time``; returns
        what :meth:`record` returns.

        ``event`` may also be a function returning the event, called on the writer thread
        (the costly part of a value, such as binning a histogram, then costs the caller
        nothing); ``nbytes`` then estimates the event's size and ``held`` the memory its
        inputs hold until then. For what only TensorBoard's format holds (text, audio, PR
        curves, hyper-parameters ...): a MindSpore-format record writes it to a
        TensorBoard-format file in the same directory, so nothing is dropped.
        """
        item = self._intake.event_item(event, nbytes, held)
        owner = "SummaryRecord.record_tensorboard_event"
        step = checked_step(step, owner)
        wall = checked_wall(wall_time, owner)
        if not self._state.writable("record_tensorboard_event()"):
            return False
        return self._pending.write_alone(StepBatch(step, wall, [item]))

    # ---- the record itself ---------------------------------------------------------------

    def stop_keeping_calls(self) -> None:
        """Keep no earlier forward calls for a ``train_network`` given to :meth:`record`
        (its graph then comes from its next call; see
        :mod:`~sumlens.summary.network_graph`): every module call costs a little less. A
        collaborator that captures the graph by itself (``SummaryCollector``) calls this."""
        self._graph.stop_keeping_calls()

    def set_mode(self, mode: str) -> None:
        """``"train"`` (summary-operator values are written) or ``"eval"`` (they are discarded)."""
        if mode not in MODES:
            raise ValueError(f"mode={mode!r} is not one of {MODES}")
        self._mode = mode

    def flush(self) -> None:
        """Return once everything recorded so far is readable by other processes."""
        state = self._state
        if not state.is_open:  # said once (never in a forked child)
            state.say_closed("flush() (it can not flush)")
            return
        self._files.flush()
        state.raise_pending()

    def close(self, timeout: float | None = None) -> None:
        """Write everything and close the files (0400 with ``owner_only``); later calls do
        nothing."""
        state = self._state
        if not state.is_open:
            return
        state.close()
        registry.unregister(self)
        self._graph.close(repr(self))
        self._files.close(timeout, self.raise_exception)
        state.raise_pending()

    def _disable_after_fork(self) -> None:
        """In a forked child: never write, never wait (the writer thread stayed in the parent)."""
        self._state.fork()
        self._graph.after_fork()
        self._pending.discard()
        self._pipeline.scalar_rows.reset_after_fork()

    # ---- context manager -------------------------------------------------------------------

    def __enter__(self) -> SummaryRecord:
        """Make this the active record for summary operators in this context (the
        innermost entered one wins); leaving closes it. A collaborator that keeps it
        entered across calls holds it in a ``contextlib.ExitStack``."""
        if self._state.closed:
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
