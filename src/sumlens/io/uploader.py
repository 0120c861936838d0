"""Uploading a writer's spool in the background, with retries, and saying what failed.

An :class:`Uploader` runs one daemon thread per spool (:mod:`sumlens.io.spool`): every
``interval`` seconds it puts what changed, so a viewer of the store sees a running job
within one interval; :meth:`Uploader.flush` puts everything now. A pass that fails (the
store unreachable, a throttled request) is said once, retried with a doubling back-off
(:data:`FIRST_RETRY` up to :data:`LAST_RETRY` seconds) until it succeeds, and the
recovery is said too; nothing is dropped, since the records wait in the spool. At
:meth:`Uploader.close` the last pass is retried until the deadline; what still could not
be uploaded is named in one error with the spool's path, where ``sumlens upload`` finds
it later.
"""

from __future__ import annotations

import threading
import time

from sumlens._log import logger
from sumlens.io.spool import Spool, SyncResult

FIRST_RETRY = 0.5
"""Seconds before the first retry of a failed pass."""
LAST_RETRY = 30.0
"""The longest wait between retries."""


class UploadError(OSError):
    """Files of a spool could not be uploaded; they are kept in the spool."""


class Uploader:
    """Puts ``spool``'s changes every ``interval`` seconds on a thread of its own."""

    def __init__(self, spool: Spool, interval: float) -> None:
        self.spool = spool
        self.interval = interval
        self._lock = threading.Lock()
        """Held for a pass: passes of the thread, ``flush`` and ``close`` never overlap."""
        self._wake = threading.Event()
        self._stop = False
        self._failures = 0
        """Failed passes in a row (0 while uploads go through)."""
        self._thread = threading.Thread(target=self._run, name="sumlens-uploader", daemon=True)
        self._thread.start()

    @property
    def failing(self) -> bool:
        """Whether the last pass failed (retries are under way)."""
        return self._failures > 0

    def flush(self) -> bool:
        """Put everything written so far now; True when it is all in the store.

        While the store fails, the thread's retries go on and this does not wait for them.
        """
        if self.failing:
            self._wake.set()
            return False
        return self._pass(finished=False)

    def close(self, timeout: float | None = None) -> None:
        """Stop the thread, then put everything, retrying until ``timeout`` seconds have
        passed (None: :data:`LAST_RETRY`); raise :class:`UploadError` for what is left."""
        self._stop = True
        self._wake.set()
        self._thread.join()
        deadline = time.monotonic() + (LAST_RETRY if timeout is None else timeout)
        wait = FIRST_RETRY
        while not self._pass(finished=True):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(wait, left))
            wait = min(wait * 2, LAST_RETRY)
        unsent = self.spool.left()
        if not unsent:
            self.spool.remove_if_done()
            return
        self.spool.give_up()
        raise UploadError(
            f"{len(unsent)} file(s) ({sum(unsent.values())} bytes) could not be uploaded to "
            f"{self.spool.url}; they are kept in {self.spool.local_dir}: upload them with "
            f"`sumlens upload {self.spool.local_dir}`"
        )

    def _run(self) -> None:
        while True:
            wait = self.interval if not self.failing else self._retry_wait()
            self._wake.wait(wait)
            self._wake.clear()
            if self._stop:
                return
            self._pass(finished=False)

    def _retry_wait(self) -> float:
        return min(FIRST_RETRY * 2 ** (self._failures - 1), LAST_RETRY)

    def _pass(self, finished: bool) -> bool:
        """One sync of the spool, counted and said; True when nothing failed."""
        with self._lock:
            result = self.spool.sync(finished)
            self._said(result)
            return not result.failed

    def _said(self, result: SyncResult) -> None:
        """Say the first failure of a run of them, and the recovery after one."""
        if result.failed:
            self._failures += 1
            if self._failures == 1:
                name, err = next(iter(result.failed.items()))
                logger.error(
                    "uploading to %s failed (%d file(s), first %s: %s); retrying with back-off, "
                    "the records wait in %s",
                    self.spool.url,
                    len(result.failed),
                    name,
                    err,
                    self.spool.local_dir,
                )
        elif self._failures:
            logger.warning(
                "uploads to %s go through again after %d failed attempt(s); nothing was lost",
                self.spool.url,
                self._failures,
            )
            self._failures = 0
