"""Whether a ``SummaryRecord`` takes values now, and the write errors it hands back.

A record is open until ``close()``, and switched off in a forked child (whose writer thread
stayed in the parent: it must neither write nor wait). What is given to a closed record is
not written, and said once per record (a loop that goes on after the close would otherwise
log a line per call). With ``raise_exception=True`` the writer thread's first error since
the last call is raised on the caller's thread (see :mod:`sumlens.summary.pipeline`).
"""

from __future__ import annotations

from collections.abc import Callable

from sumlens._log import logger
from sumlens.summary.pipeline import WriterPipeline


class RecordState:
    """Open, closed or forked; ``location()`` names the record in what is logged."""

    def __init__(
        self, pipeline: WriterPipeline, raise_exception: bool, location: Callable[[], str]
    ) -> None:
        self.is_open = True
        """True until closed (and never in a forked child)."""
        self.closed = False
        self.forked = False
        self._said_closed = False
        self._pipeline = pipeline
        self._raise_exception = raise_exception
        self._location = location

    def close(self) -> None:
        """Mark the record closed: it takes no values from now on."""
        self.closed, self.is_open = True, False

    def fork(self) -> None:
        """Mark the record a forked child's copy: it neither writes nor waits."""
        self.forked, self.is_open = True, False

    def writable(self, call: str, *args: object) -> bool:
        """Whether values can be written now; raises a pending write error first (see
        :meth:`raise_pending`). A closed record says so once, naming ``call % args`` (made
        only then: this is asked on every call)."""
        if not self.is_open:
            self.say_closed(call, *args)
            return False
        if self._raise_exception:
            self.raise_pending()
        return True

    def say_closed(self, call: str, *args: object) -> None:
        """Say once per record that ``call % args``, made after ``close()``, wrote nothing."""
        if self.forked or self._said_closed:  # a forked child: the parent records
            return
        self._said_closed = True
        logger.error(
            "SummaryRecord(%r, closed) is closed; %s wrote nothing, and later calls to it "
            "write nothing either (not logged again)",
            self._location(),
            call % args if args else call,
        )

    def raise_pending(self) -> None:
        """Raise the first write error since the last call, with ``raise_exception=True``
        (otherwise it was logged, and ``record()`` answers False)."""
        if self._raise_exception:
            error = self._pipeline.take_error()
            if error is not None:
                raise error
