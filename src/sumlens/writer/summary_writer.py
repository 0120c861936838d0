"""``SummaryWriter``: the API of ``torch.utils.tensorboard.SummaryWriter`` over SummaryRecord.

Switching is one import line (``from sumlens import SummaryWriter``): the same
constructor, the same ``add_*`` methods with their own ``global_step`` and ``walltime``
(steps may interleave between tags), ``flush``, ``close`` and the context manager. What
changes is the cost: values go through :class:`~sumlens.summary.SummaryRecord`'s writer
(scalars in its fast lane, a CUDA tensor copied without waiting for the device, PNG and
buckets on the writer thread, memory bounded), so a call costs the training loop a few
microseconds, and files stay readable if the process dies.

By default the files are TensorBoard's (``file_format="tensorboard"``), readable by every
tool that reads torch's. ``file_format="mindspore"`` writes MindSpore's format for
MindInsight; what that format cannot hold (text, audio, PR curves, meshes, layouts,
hyper-parameter sessions, raw histograms) goes to a TensorBoard-format file in the same
run directory, never dropped.

Where torch's writer differs from what a user would want, the difference is said in the
method's docstring: ``add_hparams`` writes into this run (torch makes a timestamped
sub-run), and also as MindSpore train lineage so the lineage view compares runs by them.
Code that reaches torch's file writer (``writer.file_writer.add_summary(...)``, Lightning's
``_get_file_writer()``) finds its API over the same record
(:mod:`sumlens.writer.file_writer`).
"""

from __future__ import annotations

import math
import os
import socket
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import numpy as np

from sumlens._checks import (
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_str,
    check_text,
)
from sumlens._log import logger
from sumlens._proto import tensorboard_pb2
from sumlens.io.remote import is_url
from sumlens.summary import SummaryRecord
from sumlens.summary.convert import PendingArray, host_view, resolve
from sumlens.writer.arrays import host_array, snapshot_array
from sumlens.writer.file_writer import FileWriter
from sumlens.writer.histogram import (
    HISTOGRAM_KERNELS,
    RefusedCounts,
    binnable,
    binned_at_once,
    check_bins,
    histogram_proto,
    not_binnable,
)
from sumlens.writer.hparams_lineage import hparams_lineage
from sumlens.writer.pixels import to_uint8_pixels

FILE_FORMATS = ("tensorboard", "mindspore")
OWNER = "SummaryWriter"


def default_log_dir(comment: str = "") -> str:
    """``runs/<Mon><day>_<HH-MM-SS>_<host><comment>``, the directory torch's writer picks."""
    stamp = datetime.now().strftime("%b%d_%H-%M-%S")
    return os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")


ADAPTER_WRITER_OPTIONS = (
    "comment",
    "purge_step",
    "max_queue",
    "flush_secs",
    "filename_suffix",
    "max_pending_bytes",
    "storage_options",
    "spool_dir",
    "owner_only",
)
"""The :class:`SummaryWriter` arguments an adapter (Lightning, Hugging Face, Keras) passes on
to the writers it opens; it sets the directory and ``file_format`` itself."""


def check_writer_options(options: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """``options`` as a dict, refused where the user called when a name is not one of
    :data:`ADAPTER_WRITER_OPTIONS` (the adapter opens its writers later, in training)."""
    unknown = sorted(set(options) - set(ADAPTER_WRITER_OPTIONS))
    if unknown:
        raise TypeError(
            f"{owner}: {', '.join(map(repr, unknown))} is not an option of the summary writer; "
            f"allowed: {', '.join(ADAPTER_WRITER_OPTIONS)}"
        )
    return dict(options)


class SummaryWriter:
    """Write TensorBoard (or MindSpore) event files with torch's ``SummaryWriter`` API.

    ``log_dir`` defaults to ``runs/<date>_<host><comment>``; ``purge_step`` marks a
    restart (TensorBoard then hides the events at and after that step written before it);
    ``max_queue`` is accepted for compatibility (values are written within a fraction of
    a second anyway, and memory is bounded by ``max_pending_bytes``); ``filename_suffix``
    ends the event file's name. ``log_dir`` may be a URL of object storage
    (``s3://bucket/run`` ...) with fsspec's ``storage_options``: the files are spooled
    locally (under ``spool_dir``) and uploaded every ``flush_secs``, at :meth:`flush` and
    at :meth:`close` (see ``SummaryRecord``). Directories and files get the modes the umask
    leaves, as torch's writer makes them (0755 and 0644 under umask 022);
    ``owner_only=True`` makes them only their owner's, as MindSpore does (0700, 0600 while
    written, 0400 once closed).
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str] | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
        *,
        file_format: str = "tensorboard",
        max_pending_bytes: int | None = None,
        storage_options: Mapping[str, Any] | None = None,
        spool_dir: str | os.PathLike[str] | None = None,
        owner_only: bool = False,
    ) -> None:
        check_str(comment, "comment", OWNER)
        owner_only = check_bool(owner_only, "owner_only", OWNER)
        check_int(max_queue, "max_queue", OWNER, 1)
        check_number(flush_secs, "flush_secs", OWNER, above=0.0)
        check_str(filename_suffix, "filename_suffix", OWNER)
        if purge_step is not None:
            check_int(purge_step, "purge_step", OWNER, 0)
        self.file_format = check_choice(file_format, "file_format", OWNER, FILE_FORMATS)
        self.log_dir = os.fspath(log_dir) if log_dir is not None else default_log_dir(comment)
        options: dict[str, Any] = {"file_format": self.file_format}
        if filename_suffix:
            options["filename_suffix"] = filename_suffix
        if max_pending_bytes is not None:
            options["max_pending_bytes"] = max_pending_bytes
        if owner_only:
            options["owner_only"] = True
        self._child_options = {**options, "flush_secs": flush_secs}
        if storage_options:
            options["storage_options"] = self._child_options["storage_options"] = storage_options
        if spool_dir is not None:
            options["spool_dir"] = self._child_options["spool_dir"] = spool_dir
        if is_url(self.log_dir):
            options["upload_secs"] = flush_secs
        self._current = SummaryRecord(self.log_dir, **options)
        if self.file_format == "tensorboard":  # torch's buckets: ready by the first histogram
            HISTOGRAM_KERNELS.start()  # (0.2 s from the cache), as the record's own kernels
        self._reopen = False  # set by close(): a later value opens a new file
        self._options = options
        self._children: dict[str, SummaryWriter] = {}
        self._file_writer = FileWriter(self)
        self._unbinned = RefusedCounts()  # histograms not written (see _unbinnable)
        if purge_step is not None:
            self._purge(purge_step)

    # ---- the writer itself -----------------------------------------------------------------

    @property
    def summary_record(self) -> SummaryRecord:
        """The :class:`~sumlens.summary.SummaryRecord` underneath (for lineage and the rest
        of MindSpore's API: ``add_value`` then ``record(step)``)."""
        return self._record

    @property
    def _record(self) -> SummaryRecord:
        """The open record (see :meth:`_open_record`)."""
        return self._open_record()

    def _open_record(self) -> SummaryRecord:
        """The open record; after :meth:`close`, a new one (a new file in the same
        directory), as torch's writer opens a new file for values given after its close."""
        record = self._current
        if self._reopen and not record.is_open:
            self._current = record = SummaryRecord(self.log_dir, **self._options)
            self._reopen = False
        return record

    @property
    def file_writer(self) -> FileWriter | None:
        """torch's ``FileWriter`` API to the run's event file (``add_summary``,
        ``add_event``, ``get_logdir``, ``flush``, ``close``); None after :meth:`close`, as
        torch's, until a later value opens a new file."""
        return None if self._reopen else self._file_writer

    def _get_file_writer(self) -> FileWriter:
        """The file writer, a new file opened first after :meth:`close` (torch's name, which
        Lightning's ``TensorBoardLogger`` calls)."""
        self._open_record()
        return self._file_writer

    def _close_file(self) -> None:
        """Close the run's own file (not the sub-runs'): a later value opens a new one."""
        self._current.close()
        self._reopen = True
        for tag, count in self._unbinned.drain().items():
            logger.error(
                "%s.add_histogram: %d histogram(s) of tag %r could not be binned and were not "
                "written (the first is said above)",
                OWNER,
                count,
                tag,
            )

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self.log_dir

    def flush(self) -> None:
        """Return once everything added so far is on disk, for this writer and the
        sub-writers of :meth:`add_scalars`."""
        for child in self._children.values():
            child.flush()
        if self._current.is_open:
            self._current.flush()

    def close(self) -> None:
        """Write everything and close the files (and those of :meth:`add_scalars`). Values
        given afterwards go to new files, as with torch's writer."""
        for child in self._children.values():
            child.close()
        self._close_file()

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SummaryWriter({self.log_dir!r}, file_format={self.file_format!r})"

    # ---- scalars ----------------------------------------------------------------------------

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """One scalar (a number, a one-element array or tensor; a CUDA tensor is not
        synchronised). ``new_style`` writes it as a tensor of the scalars plugin, in double
        precision with ``double_precision`` (TensorBoard's format only; these read the
        value now)."""
        record = self._current
        if type(global_step) is not int or new_style or double_precision or self._reopen:
            global_step = _step(global_step)
            if (new_style or double_precision) and self.file_format == "tensorboard":
                value = _tensor_scalar(tag, scalar_value, double_precision)
                self._summary(value, global_step, walltime)
                return
            record = self._open_record()
        # One call into the record, its scalar lane: the first test there is the fast join
        # of a float to its step's row (see sumlens.summary.scalar_lane).
        record.scalar_lane.put(global_step, walltime, tag, scalar_value)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Several scalars in one chart: each key's values go to a sub-run
        ``<log_dir>/<main_tag>_<key>`` under the tag ``main_tag``, as torch's writer lays
        them out."""
        check_text(main_tag, "main_tag", OWNER, non_empty=True)
        if not isinstance(tag_scalar_dict, dict):
            raise TypeError(
                f"add_scalars: tag_scalar_dict must be a dict of tag -> value, "
                f"got {type(tag_scalar_dict).__name__}"
            )
        for key in tag_scalar_dict:
            check_text(key, "tag_scalar_dict key", OWNER)
        wall = time.time() if walltime is None else walltime
        for key, value in tag_scalar_dict.items():
            name = f"{main_tag.replace('/', '_')}_{key}"
            child = self._children.get(name)
            if child is None:
                child = SummaryWriter(os.path.join(self.log_dir, name), **self._child_options)
                self._children[name] = child
            child.add_scalar(main_tag, value, global_step, wall)

    # ---- arrays -------------------------------------------------------------------------------

    def add_tensor(
        self, tag: str, tensor: Any, global_step: int | None = None, walltime: float | None = None
    ) -> None:
        """A whole tensor (TensorBoard's tensor summaries, MindSpore's TensorSummary)."""
        self._record.record_value("tensor", tag, tensor, _step(global_step), walltime)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """A histogram of ``values``. In TensorBoard's format binned as torch's writer bins
        it (:mod:`sumlens.writer.histogram`: the same buckets): a CPU array or tensor at
        once, straight from its memory (cheaper than a copy), once the compiled kernels are
        ready; otherwise, and for a CUDA tensor (which reaches the host without waiting for
        the device), on the writer thread from a copy. In MindSpore's format with
        MindSpore's buckets (``bins`` and ``max_bins`` do not apply there).

        What torch's writer refuses is refused here with a ``ValueError`` naming ``values``
        and the tag: no value inside the edges (with the default bins: NaN, infinities and
        magnitudes past the last edge, about 9.92e19, only), or for a count or a numpy
        rule, NaN or infinite values. A CUDA tensor's values are seen only when they reach
        the host: one that cannot be binned is not written, and said in the log (the first
        of each tag, and how many at :meth:`close`)."""
        step = _step(global_step)
        if self.file_format == "mindspore":
            self._record.record_value("histogram", tag, values, step, walltime)
            return
        owner = f"{OWNER}.add_histogram"
        check_text(tag, "tag", owner, non_empty=True)
        check_bins(bins, max_bins, owner)
        view = None if isinstance(values, list | tuple) else host_view(values)
        if view is not None and view.size and binned_at_once(view, bins):
            try:
                proto = histogram_proto(view, bins, max_bins)
            except ValueError as err:
                raise not_binnable(tag, bins, owner, str(err)) from None
            self._summary(tensorboard_pb2.Summary.Value(tag=tag, histo=proto), step, walltime)
            return
        copy = snapshot_array(values, "values", owner)
        if math.prod(copy.shape) == 0:
            raise ValueError(f"{owner}: values has no element; a histogram needs one at least")
        edges = bins if isinstance(copy, PendingArray) else binnable(copy, bins, tag, owner)

        def event() -> tensorboard_pb2.Event | None:
            try:
                proto = histogram_proto(resolve(copy), edges, max_bins)
            except ValueError as err:  # a CUDA tensor's values, seen here first
                self._unbinnable(tag, step, not_binnable(tag, bins, owner, str(err)))
                return None  # nothing to write
            made = tensorboard_pb2.Event()
            made.summary.value.add(tag=tag, histo=proto)
            return made

        self._record.record_tensorboard_event(event, step, walltime, held=copy.nbytes)

    def _unbinnable(self, tag: str, step: int, err: ValueError) -> None:
        """A histogram that could not be binned on the writer thread: the first of each tag
        is said in full, the count at :meth:`close`."""
        if self._unbinned.add(tag) == 1:
            logger.error(
                "%s. The histogram of step %d is not written (a CUDA tensor's values are seen "
                "only on the writer thread); how many of this tag are not is said at close()",
                err,
                step,
            )

    def add_histogram_raw(
        self,
        tag: str,
        min: float,
        max: float,
        num: int,
        sum: float,
        sum_squares: float,
        bucket_limits: Any,
        bucket_counts: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """A histogram already binned: ``bucket_limits[i]`` is the right edge of the bucket
        holding ``bucket_counts[i]`` values (TensorBoard's layout)."""
        owner = f"{OWNER}.add_histogram_raw"
        check_text(tag, "tag", owner, non_empty=True)
        limits = host_array(bucket_limits, "bucket_limits", owner).astype(np.float64).reshape(-1)
        counts = host_array(bucket_counts, "bucket_counts", owner).astype(np.float64).reshape(-1)
        if limits.size != counts.size:
            raise ValueError(
                f"add_histogram_raw: bucket_limits has {limits.size} entries and bucket_counts "
                f"{counts.size}; they must be as long as each other"
            )
        proto = tensorboard_pb2.HistogramProto(
            min=float(min),
            max=float(max),
            num=float(num),
            sum=float(sum),
            sum_squares=float(sum_squares),
            bucket_limit=limits.tolist(),
            bucket=counts.tolist(),
        )
        self._summary(
            tensorboard_pb2.Summary.Value(tag=tag, histo=proto), _step(global_step), walltime
        )

    # ---- images ---------------------------------------------------------------------------------

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """One image (``dataformats`` CHW, HWC or HW; 1 or 3 channels). Pixels as torch's
        writer makes them: uint8 kept, anything else times 255, clipped to 0..255."""
        pixels = to_uint8_pixels(img_tensor, "img_tensor")
        self._record.record_value(
            "image", tag, pixels, _step(global_step), walltime, dataformats=dataformats
        )

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """A batch of images tiled into one (8 per row), as torch's writer tiles them."""
        pixels = to_uint8_pixels(img_tensor, "img_tensor")
        self._record.record_value(
            "image", tag, pixels, _step(global_step), walltime, dataformats=dataformats
        )

    def add_image_with_boxes(
        self,
        tag: str,
        img_tensor: Any,
        box_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        rescale: float = 1,
        dataformats: str = "CHW",
        labels: list[str] | None = None,
    ) -> None:
        """An image with boxes (``[N, 4]``: x_min, y_min, x_max, y_max in pixels) drawn on
        it, and their ``labels``."""
        from sumlens.writer.boxes import draw_boxes

        check_number(rescale, "rescale", OWNER, above=0.0)
        pixels = to_uint8_pixels(img_tensor, "img_tensor")
        hwc = _to_hwc(pixels, dataformats)
        drawn = draw_boxes(hwc, box_tensor, labels)
        if rescale != 1:  # boxes are drawn at the image's size, then both are scaled
            drawn = _rescaled(drawn, rescale)
        self._record.record_value(
            "image", tag, drawn, _step(global_step), walltime, dataformats="HWC"
        )

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: int | None = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """A matplotlib figure (or a list of them, tiled) rendered to an image."""
        from sumlens.writer.figure import figure_to_image

        pixels = figure_to_image(figure, close=close)
        layout = "NHWC" if pixels.ndim == 4 else "HWC"
        self._record.record_value(
            "image", tag, pixels, _step(global_step), walltime, dataformats=layout
        )

    def add_video(
        self,
        tag: str,
        vid_tensor: Any,
        global_step: int | None = None,
        fps: int | float = 4,
        walltime: float | None = None,
    ) -> None:
        """A video (``[N, T, C, H, W]``) as an animated GIF image (no moviepy needed)."""
        from sumlens.writer.video import video_value

        self._summary(video_value(tag, vid_tensor, fps), _step(global_step), walltime)

    # ---- TensorBoard's plugins -------------------------------------------------------------------

    def add_audio(
        self,
        tag: str,
        snd_tensor: Any,
        global_step: int | None = None,
        sample_rate: int = 44100,
        walltime: float | None = None,
    ) -> None:
        """A sound clip (values in [-1, 1]) as 16-bit WAV."""
        from sumlens.writer.audio import audio_value

        self._summary(audio_value(tag, snd_tensor, sample_rate), _step(global_step), walltime)

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """A text (markdown) for TensorBoard's text dashboard."""
        from sumlens.writer.text import text_value

        self._summary(text_value(tag, text_string), _step(global_step), walltime)

    def add_pr_curve(
        self,
        tag: str,
        labels: Any,
        predictions: Any,
        global_step: int | None = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: float | None = None,
    ) -> None:
        """A precision-recall curve of ``predictions`` (in [0, 1]) against 0/1 ``labels``."""
        from sumlens.writer.pr_curve import pr_curve_value

        value = pr_curve_value(tag, labels, predictions, num_thresholds, weights)
        self._summary(value, _step(global_step), walltime)

    def add_pr_curve_raw(
        self,
        tag: str,
        true_positive_counts: Any,
        false_positive_counts: Any,
        true_negative_counts: Any,
        false_negative_counts: Any,
        precision: Any,
        recall: Any,
        global_step: int | None = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: float | None = None,
    ) -> None:
        """A precision-recall curve from counts already made per threshold."""
        from sumlens.writer.pr_curve import pr_curve_raw_value

        value = pr_curve_raw_value(
            tag,
            true_positive_counts,
            false_positive_counts,
            true_negative_counts,
            false_negative_counts,
            precision,
            recall,
            num_thresholds,
            weights,
        )
        self._summary(value, _step(global_step), walltime)

    def add_custom_scalars(self, layout: dict[str, Any]) -> None:
        """The custom-scalars dashboard's layout: ``{category: {chart: [kind, tags]}}``
        with kind ``"Multiline"`` (``tags``: a list of tag patterns) or ``"Margin"``
        (``tags``: value, lower, upper)."""
        from sumlens.writer.custom_scalars import custom_scalars_value

        self._summary(custom_scalars_value(layout), 0, None)

    def add_custom_scalars_multilinechart(
        self, tags: list[str], category: str = "default", title: str = "untitled"
    ) -> None:
        """A layout of one multi-line chart of ``tags``."""
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(
        self, tags: list[str], category: str = "default", title: str = "untitled"
    ) -> None:
        """A layout of one margin chart: ``tags`` are value, lower and upper."""
        if not isinstance(tags, list | tuple) or len(tags) != 3:
            raise ValueError(
                f"add_custom_scalars_marginchart: tags={tags!r} must be 3 tags: value, lower, upper"
            )
        self.add_custom_scalars({category: {title: ["Margin", list(tags)]}})

    def add_mesh(
        self,
        tag: str,
        vertices: Any,
        colors: Any = None,
        faces: Any = None,
        config_dict: dict[str, Any] | None = None,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """A 3-D mesh or point cloud (``vertices``: ``[B, N, 3]``) for the mesh dashboard."""
        from sumlens.writer.mesh import mesh_values

        step = _step(global_step)
        values = mesh_values(tag, vertices, colors, faces, config_dict)
        wall = time.time() if walltime is None else walltime
        for value in values:
            self._summary(value, step, wall)

    def add_embedding(
        self,
        mat: Any,
        metadata: Any = None,
        label_img: Any = None,
        global_step: int | None = None,
        tag: str = "default",
        metadata_header: Any = None,
    ) -> None:
        """Vectors (``[N, D]``) for TensorBoard's projector, with a label per row (a list,
        array or tensor; with ``metadata_header``, rows of columns) and optional thumbnails
        (``label_img``: ``[N, C, H, W]``), written as torch's writer writes them (files
        below the log directory and ``projector_config.pbtxt``; a label is ``str()`` of it)."""
        from sumlens.writer.embedding import write_embedding

        write_embedding(
            self._record.local_dir,
            mat,
            metadata,
            label_img,
            global_step,
            tag,
            metadata_header,
            owner_only=bool(self._options.get("owner_only")),
        )

    def add_hparams(
        self,
        hparam_dict: dict[str, Any],
        metric_dict: dict[str, Any],
        hparam_domain_discrete: dict[str, list[Any]] | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """Hyper-parameters and their results.

        Unlike torch's writer, which makes a sub-run named by the time, they belong to this
        run (``run_name`` names a sub-run if given): TensorBoard's hparams records, each
        metric as a scalar, and MindSpore lineage (:mod:`sumlens.writer.hparams_lineage`),
        so the lineage view and MindInsight list the run with them.
        """
        from sumlens.writer.hparams import hparams_values

        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise TypeError("add_hparams: hparam_dict and metric_dict must be dicts")
        if run_name is not None:
            check_text(run_name, "run_name", OWNER, non_empty=True)
            child = self._children.get(run_name)
            if child is None:
                child = SummaryWriter(os.path.join(self.log_dir, run_name), **self._child_options)
                self._children[run_name] = child
            child.add_hparams(hparam_dict, metric_dict, hparam_domain_discrete, None, global_step)
            return
        step = _step(global_step)
        wall = time.time()
        for value in hparams_values(hparam_dict, metric_dict, hparam_domain_discrete):
            self._summary(value, step, wall)
        for key, metric in metric_dict.items():
            self.add_scalar(key, metric, global_step, wall)
        for lineage in hparams_lineage(hparam_dict, metric_dict):
            self._record.add_value(lineage.plugin, lineage.plugin, lineage)
        self._record.record(step)

    # ---- graphs ----------------------------------------------------------------------------------

    def add_graph(
        self,
        model: Any,
        input_to_model: Any = None,
        verbose: bool = False,
        use_strict_trace: bool = True,
    ) -> None:
        """The graph of a torch module, called on ``input_to_model``: a TensorFlow GraphDef
        with its run metadata in TensorBoard's format, MindSpore's graph in MindSpore's.
        What torch's writer refuses is refused with the same exception type (a model that
        fails on its inputs; with ``use_strict_trace=True``, a dict among its outputs): see
        :func:`sumlens.writer.graph_def.checked_capture`."""
        if self.file_format == "mindspore":
            from sumlens.writer.graph_def import checked_capture

            graph = checked_capture(model, input_to_model, verbose, use_strict_trace).graph
            self._record.record_value("graph", "graph", graph, 0)
            return
        from sumlens.writer.graph_def import graph_def_of

        graph_def, run_metadata = graph_def_of(model, input_to_model, verbose, use_strict_trace)
        self._graph_events(graph_def, run_metadata)

    def add_onnx_graph(self, prototxt: str | os.PathLike[str]) -> None:
        """The graph of the ONNX model file ``prototxt`` (torch's name for the path; needs
        the ``onnx`` package)."""
        from sumlens.writer.onnx_graph import onnx_graph_def

        self._graph_events(onnx_graph_def(prototxt), None)

    def _graph_events(self, graph_def: bytes, run_metadata: bytes | None) -> None:
        from sumlens.writer.graph_def import graph_events

        wall = time.time()
        for event in graph_events(graph_def, run_metadata):
            self._event(event, 0, wall)

    # ---- plumbing -----------------------------------------------------------------------------

    def _purge(self, purge_step: int) -> None:
        """Mark a restart at ``purge_step`` (a session-log START event)."""
        event = tensorboard_pb2.Event()
        event.session_log.status = tensorboard_pb2.SessionLog.START
        self._event(event, purge_step, None)

    def _summary(
        self, value: tensorboard_pb2.Summary.Value, step: int, walltime: float | None
    ) -> None:
        event = tensorboard_pb2.Event()
        event.summary.value.append(value)
        self._event(event, step, walltime)

    def _event(self, event: tensorboard_pb2.Event, step: int, walltime: float | None) -> None:
        self._record.record_tensorboard_event(event, step, walltime)


def _step(global_step: Any) -> int:
    """torch's writer stores a missing step as 0."""
    if type(global_step) is int:  # the common case; its range is the record's to check
        return global_step
    if global_step is None:
        return 0
    if hasattr(global_step, "item"):
        global_step = global_step.item()
    return int(check_int(global_step, "global_step", OWNER))


def _tensor_scalar(tag: str, value: Any, double: bool) -> tensorboard_pb2.Summary.Value:
    """A scalar as the scalars plugin's tensor (torch's ``new_style``)."""
    check_text(tag, "tag", OWNER, non_empty=True)
    number = float(host_array(value, "scalar_value", f"{OWNER}.add_scalar").reshape(-1)[0])
    proto = tensorboard_pb2.Summary.Value(tag=tag)
    proto.metadata.plugin_data.plugin_name = "scalars"
    if double:
        proto.tensor.dtype = tensorboard_pb2.DT_DOUBLE
        proto.tensor.double_val.append(number)
    else:
        proto.tensor.dtype = tensorboard_pb2.DT_FLOAT
        proto.tensor.float_val.append(number)
    return proto


def _to_hwc(pixels: Any, dataformats: str) -> np.ndarray:
    """An image laid out as CHW, HWC or HW, as an H x W x 3 uint8 array."""
    layout = dataformats.upper() if isinstance(dataformats, str) else dataformats
    check_choice(layout, "dataformats", f"{OWNER}.add_image_with_boxes", ("CHW", "HWC", "HW"))
    array = host_array(pixels, "img_tensor", f"{OWNER}.add_image_with_boxes")
    if array.ndim != len(layout):
        raise ValueError(
            f"{OWNER}: img_tensor has shape {array.shape}, not an image in layout {layout!r}"
        )
    if layout == "HW":
        array = array[:, :, None]
    elif layout == "CHW":
        array = np.transpose(array, (1, 2, 0))
    if array.shape[2] == 1:
        array = np.repeat(array, 3, axis=2)
    return np.ascontiguousarray(array)


def _rescaled(pixels: np.ndarray, factor: float) -> np.ndarray:
    from PIL import Image

    height, width = pixels.shape[:2]
    size = (max(1, int(width * factor)), max(1, int(height * factor)))
    return np.asarray(Image.fromarray(pixels).resize(size, Image.Resampling.LANCZOS))
