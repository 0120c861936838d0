"""The files of one ``SummaryRecord``, and the writer pipeline that writes them.

* the summary file, in MindSpore's format or TensorBoard's, rotated before it would
  exceed ``max_file_size`` (each new file is checked for another live writer:
  :mod:`sumlens.summary.live_writers`);
* the lineage file, never split: MindInsight rejects a lineage file holding custom
  lineage data alone, so its few small records stay in one file;
* beside a MindSpore-format summary file, a TensorBoard-format one for what only that
  format holds (text, audio, PR curves ...);
* with ``export_options={"tensor_format": "npy"}``, a directory of ``.npy`` tensors.

Their names follow :mod:`sumlens.io.naming`, stamped with the second the record opened.
:class:`RecordFiles` holds them with their destination (a directory, or a spool uploaded to
object storage: :mod:`sumlens.summary.destination`), and flushes and closes them.
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any

from sumlens._log import logger
from sumlens._numba import prepare as prepare_kernels
from sumlens.io.naming import (
    export_dir_name,
    hostname,
    lineage_file_name,
    summary_file_name,
    tensorboard_file_name,
)
from sumlens.summary.destination import Destination
from sumlens.summary.encoders import version_payload
from sumlens.summary.eventfile import EventFile
from sumlens.summary.export import NpyExporter
from sumlens.summary.kernels import WRITER_KERNELS
from sumlens.summary.live_writers import check_new_file
from sumlens.summary.pipeline import WriterPipeline


class RecordFiles:
    """A record's files in ``destination``, and the pipeline that writes them."""

    def __init__(self, destination: Destination, pipeline: WriterPipeline) -> None:
        self.destination = destination
        self.pipeline = pipeline

    def location(self) -> str:
        """Full path of the summary file (the name it will get, before the first write);
        its URL when the record writes to object storage."""
        return self.destination.location(self.pipeline.summary_file.expected_path)

    def flush(self) -> None:
        """Return once everything handed to the pipeline is written (and uploaded)."""
        self.pipeline.flush()
        self.destination.flush()

    def close(self, timeout: float | None, raise_exception: bool) -> None:
        """Write everything and close the files, waiting at most ``timeout`` seconds (None:
        as long as it takes); what could not be uploaded is logged, or raised."""
        started = time.monotonic()
        if not self.pipeline.close(timeout):
            logger.error("closing the summary writer timed out after %s s", timeout)
        left = None if timeout is None else max(0.0, timeout - (time.monotonic() - started))
        not_uploaded = self.destination.close(left)
        if not_uploaded is not None:
            logger.error("%s", not_uploaded)
            if raise_exception:
                raise not_uploaded


def open_files(
    destination: Destination,
    rank: int,
    *,
    file_format: str,
    file_prefix: str,
    file_suffix: str,
    filename_suffix: str,
    max_file_size: int | None,
    num_process: int,
    max_pending_bytes: int,
    export_options: dict[str, Any],
    owner_only: bool,
) -> RecordFiles:
    """The record's files in ``destination`` (named for ``rank``), and its started pipeline
    with at most ``num_process`` encoding threads."""
    directory, storage = destination.directory, destination.storage
    seconds = int(time.time())
    host = hostname()

    def tensorboard_name(t: int) -> str:
        return tensorboard_file_name(t, host, f".{rank}{filename_suffix}")

    def summary_name(t: int) -> str:
        if file_format == "tensorboard":
            return tensorboard_name(t)
        return summary_file_name(t, file_prefix, file_suffix, rank, host)

    summary_file = EventFile(
        directory,
        summary_name,
        seconds,
        max_file_size,
        header=lambda: version_payload(file_format, time.time()),
        on_new_file=functools.partial(check_new_file, directory, rank),
        storage=storage,
        part_bytes=destination.part_bytes,
    )
    lineage_file = EventFile(
        directory,
        lambda t: lineage_file_name(t, file_prefix, rank, host),
        seconds,
        None,
        storage=storage,
    )
    tensorboard_file = None
    if file_format != "tensorboard":
        tensorboard_file = EventFile(
            directory,
            tensorboard_name,
            seconds,
            None,
            header=lambda: version_payload("tensorboard", time.time()),
            storage=storage,
            part_bytes=destination.part_bytes,
        )
    exporter = None
    if export_options.get("tensor_format") == "npy":
        exporter = NpyExporter(directory / export_dir_name(seconds), owner_only)
    prepare_kernels()  # before the writer thread exists (see sumlens._numba)
    WRITER_KERNELS.start()  # compiled off this thread; plain paths meanwhile
    pipeline = WriterPipeline(
        file_format,
        summary_file,
        lineage_file,
        workers=max(1, min(num_process, os.cpu_count() or 1)),
        tensorboard_file=tensorboard_file,
        export=exporter,
        max_pending_bytes=max_pending_bytes,
    )
    return RecordFiles(destination, pipeline)
