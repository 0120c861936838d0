"""Watching a local base directory, so an idle server does not walk it every few seconds.

The loader walks its base directory every ``reload_interval`` (:mod:`.discover`); over
20,000 directories even a walk that lists nothing again stats each one. A
:class:`TreeWatch` asks the operating system to report changes under the tree instead
(inotify, FSEvents or ReadDirectoryChangesW through ``watchfiles``), and :meth:`due` says
whether a walk is needed: after a reported change, at least every :data:`FULL_WALK_S`
(what a watch can miss: an event queue that overflowed, a file written into a directory
in the instant before its watch was added), and at every look while the watch is not
running.

Watching is not tried, and the loader polls as before, where it cannot work: a network
or FUSE file system (changes made by other machines raise no local event), a tree holding
symbolic links (what they lead to is outside the watch), ``watchfiles`` not installed,
``watch=False``, or object storage (nothing reports its changes: :data:`OBJECT_STORAGE`).
A watch that fails to start or stops (the watch limit reached, the base directory
removed) is said once in the log and polling takes over. Changes inside the trash
(:data:`~sumlens.board.data.discover.TRASH_DIR`, which no walk enters) call for no walk.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from sumlens.board.data.discover import TRASH_DIR

_log = logging.getLogger("sumlens.board")

FULL_WALK_S = 60.0
"""Seconds between walks of a watched tree when no change is reported."""

NETWORK_FILE_SYSTEMS = frozenset(
    {
        "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs",
        "lustre", "gpfs", "beegfs", "ncpfs", "coda", "davfs", "virtiofs", "vboxsf",
    }
)  # fmt: skip
"""File systems whose changes by other machines (or the host) raise no local event."""

OBJECT_STORAGE = "the base directory is on object storage, which reports no changes"
"""Why a base directory on object storage (a URL) is polled at every reload interval."""

_WAKE_MS = 1000
"""How often the watching thread wakes without changes (to say it runs, and to stop)."""


def file_system_type(path: Path) -> str | None:
    """The type of the file system holding ``path`` (from Linux' ``/proc/self/mountinfo``),
    or None where it cannot be told."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            table = handle.read()
    except OSError:
        return None
    return mount_type(os.path.realpath(path), table)


def mount_type(path: str, mountinfo: str) -> str | None:
    """The type of the innermost mount holding the absolute ``path`` in a ``mountinfo``
    table (``ID PARENT DEV ROOT MOUNT-POINT OPTIONS ... - TYPE SOURCE OPTIONS`` per line)."""
    best, best_type = "", None
    for line in mountinfo.splitlines():
        head, _, tail = line.partition(" - ")
        fields = head.split()
        if len(fields) < 5 or not tail.split():
            continue
        mount = _unescape(fields[4])
        inside = path == mount or path.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best):
            best, best_type = mount, tail.split()[0]
    return best_type


def _unescape(field: str) -> str:
    """A mountinfo path with its octal escapes (``\\040`` for a space) decoded."""
    if "\\" not in field:
        return field
    return field.encode().decode("unicode_escape").encode("latin-1").decode(errors="replace")


def why_not_watched(root: Path) -> str | None:
    """Why changes under ``root`` cannot be watched here (None when they can)."""
    try:
        import watchfiles  # noqa: F401 - only whether it is there
    except ImportError:
        return "watchfiles is not installed"
    kind = file_system_type(root)
    if kind is not None and (kind in NETWORK_FILE_SYSTEMS or kind.startswith("fuse")):
        return f"{root} is on a {kind} file system, whose changes raise no local event"
    return None


def outside_trash(_: object, path: str) -> bool:
    """Whether a change at ``path`` may matter to a walk: it is not inside the trash."""
    return TRASH_DIR not in Path(path).parts


class TreeWatch:
    """Whether anything under ``root`` changed since the loader last walked it.

    :meth:`start` begins watching in a thread (where :func:`why_not_watched` allows, and
    unless ``off`` says why not to); :meth:`due` is True when a walk is needed and counts as
    that walk starting; :meth:`stop` ends the thread.
    """

    def __init__(self, root: Path, full_walk_s: float = FULL_WALK_S, off: str | None = None):
        self.root = root
        self.full_walk_s = full_walk_s
        self._off = off
        self.reason: str | None = off or "not started"
        """Why walks are not skipped now (None while the watch runs)."""
        self._changed = True
        self._last_walk = -float("inf")
        self._running = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._tried = False
        self._lock = threading.Lock()

    @property
    def watching(self) -> bool:
        """Whether the watch runs (walks are skipped while nothing changes)."""
        return self._running

    def start(self) -> None:
        """Begin watching, unless it cannot work here (then :attr:`reason` says why); once
        (later calls, and calls after :meth:`stop`, do nothing)."""
        if self._tried or self._off is not None or self._stop.is_set():
            return
        self._tried = True
        reason = why_not_watched(self.root)
        if reason is not None:
            self.reason = reason
            _log.info("polling %s: %s", self.root, reason)
            return
        self.reason = "starting"
        self._thread = threading.Thread(target=self._watch, name="sumlens-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """End the watch (walks are due at every look afterwards)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def due(self, links: bool = False) -> bool:
        """Whether to walk now: a change was reported, the last walk is
        :attr:`full_walk_s` old, the watch is not running, or ``links`` (the last walk met
        symbolic links, whose targets the watch does not cover). Counts as a walk."""
        now = time.monotonic()
        with self._lock:
            due = (
                links
                or not self._running
                or self._changed
                or now - self._last_walk >= self.full_walk_s
            )
            if due:
                self._changed = False
                self._last_walk = now
            return due

    def _watch(self) -> None:
        import watchfiles

        try:
            for changes in watchfiles.watch(
                self.root,
                watch_filter=outside_trash,
                debounce=200,
                step=50,
                rust_timeout=_WAKE_MS,
                yield_on_timeout=True,
                stop_event=self._stop,
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                with self._lock:
                    if not self._running:  # the watch is in place: walk once more, since
                        self._running = True  # changes before it went unseen
                        self._changed = True
                        self.reason = None
                    elif changes:
                        self._changed = True
        except Exception as err:  # polling takes over
            if not self._stop.is_set():
                _log.warning(
                    "cannot watch %s for changes (%s); walking it every reload interval",
                    self.root,
                    err,
                )
            with self._lock:
                self.reason = f"the watch failed: {err}"
        finally:
            with self._lock:
                self._running = False
                if self.reason is None:
                    self.reason = "the watch ended"
