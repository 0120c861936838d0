"""The dashboard's loader: follows every run under a base directory while the server runs.

Each poll walks the base directory (:mod:`sumlens.board.data.discover`) and has the
:class:`~sumlens.board.data.reader.RunReader` read what changed in each run's files into
its :class:`~sumlens.board.data.state.RunState`; points go to the on-disk
:class:`~sumlens.board.data.store.SegmentStore`, so memory holds only each series' ends
and chunks, whatever the base directory holds. The states are saved
(:mod:`sumlens.board.data.persist`) during a long first pass and after each pass, and a
re-open starts from them, reading only what grew.

While nothing changes, a local base directory is not walked: a
:class:`~sumlens.board.data.watch.TreeWatch` says when something did (and the loader walks
at every reload interval where watching cannot work). The watch is set up once the first
pass is over: adding a watch per directory of a large tree must not slow a cold start.

A base directory may be a URL (``s3://bucket/team``, any fsspec file system:
:func:`sumlens.io.remote.open_storage`). Object storage is not watched (nothing reports
its changes), so each reload interval costs one recursive listing
(:mod:`~sumlens.board.data.discover`) plus one ranged read of the new bytes of each object
that grew; an unchanged bucket costs the listing alone. The requests and bytes of the last
reload, and of all of them, are in :meth:`Loader.status` where the storage counts them.
The workspace (segments and saved states) stays local, in a cache directory named after
the URL as a local base directory's is named after its path.

The :class:`Loader` is the :class:`~sumlens.board.data.surface.ReadSurface` of a real base
directory (its queries are :class:`~sumlens.board.data.served.ServedRuns`'). Damage is
counted, never fatal: besides what reading meets, a run directory that cannot be listed is
counted and shown; an unexpected error marks the run, not the server.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sumlens._log import warn_once
from sumlens.board.data.discover import Discovery, FoundRun, Walker, tree_lister
from sumlens.board.data.persist import StateDB
from sumlens.board.data.reader import Engine, RunReader
from sumlens.board.data.served import ServedRuns
from sumlens.board.data.state import RunState
from sumlens.board.data.store import SegmentStore
from sumlens.board.data.surface import BesideFileTooLarge, beside_parts
from sumlens.board.data.watch import OBJECT_STORAGE, TreeWatch
from sumlens.board.plugins import DEFAULT_CAPS
from sumlens.board.projector_config import CONFIG_FILE, CONFIG_LIMIT, embedding_tags
from sumlens.board.settings import BoardSettings
from sumlens.io.remote import RequestStats, open_storage
from sumlens.io.storage import LOCAL_STORAGE, Storage

_log = logging.getLogger("sumlens.board")

SAVE_EVERY = 5.0
"""Seconds between state saves while a long first pass goes on."""


class Loader(ServedRuns):
    """Follows the runs of ``base_dir`` into a :class:`SegmentStore` kept in ``workspace``.

    ``caps`` sets how many values of each non-scalar plugin a series keeps (defaults:
    :data:`~sumlens.board.plugins.DEFAULT_CAPS`). ``base_dir`` is a local path or a URL
    (opened with ``storage_options``); run files are listed and read through ``storage``
    when it is given (``base_dir`` is then a path in it). With ``watch`` (and the local
    file system), walks wait for a reported change (:mod:`~sumlens.board.data.watch`).
    """

    def __init__(
        self,
        base_dir: Path | str,
        workspace: Path,
        reload_interval: float = BoardSettings.reload_interval,
        engine: Engine = "auto",
        caps: dict[str, int] | None = None,
        *,
        storage: Storage | None = None,
        storage_options: Mapping[str, Any] | None = None,
        watch: bool = BoardSettings.watch,
    ) -> None:
        if storage is None:
            storage, root = open_storage(base_dir, storage_options)
        else:
            root = os.fspath(base_dir)
        self.base_dir = Path(root)
        """The base directory's path in ``storage``."""
        self.location = root if storage is LOCAL_STORAGE else os.fspath(base_dir)
        """The base directory as the user named it (a URL for object storage)."""
        # the cache directory is named after the path, or the URL (a str: no Path folds "//")
        key = self.base_dir if storage is LOCAL_STORAGE else self.location
        super().__init__(SegmentStore(Path(workspace), key), storage)
        self.reload_interval = reload_interval
        self.caps = {**DEFAULT_CAPS, **(caps or {})}
        self._db = StateDB(self.store.root)
        self.loading = True
        self.truncated = False
        self.passes = 0
        self._gone: set[str] = set()  # runs removed since the last save
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pass_done = threading.Condition(self._lock)
        self._save_lock = threading.Lock()  # one save at a time
        self._restored = False
        self._walker = Walker(self.base_dir, storage)
        off = None if watch else "watching is off (--no-watch)"
        if storage is not LOCAL_STORAGE:
            off = (
                OBJECT_STORAGE
                if tree_lister(storage)
                else "its storage is not the local file system"
            )
        self._watch = TreeWatch(self.base_dir, off=off)
        counter = getattr(storage, "requests", None)  # where the storage counts them
        self._counter = counter if isinstance(counter, RequestStats) else None
        self._last_reload: dict[str, int] | None = None
        self._links = False  # whether the last walk met symbolic links
        # run id -> (its projector config's stamp, the embeddings it lists, why it lists
        # none when it cannot be read)
        self._embeddings: dict[str, tuple[tuple[int, int, int], tuple[str, ...], str | None]] = {}
        self._reader = RunReader(self, self.caps, engine, self._stop)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Poll in a background thread every ``reload_interval`` seconds."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sumlens-loader", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop polling, save the state and release the cache directory."""
        self._stop.set()
        self._watch.stop()
        if self._thread is not None:
            self._thread.join(timeout)
        self._save()
        with self._save_lock, self._lock:  # the order _save takes them in
            self._db.close()
            self.store.close()

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called: the loader reads no more."""
        return self._stop.is_set()

    def wait_for_pass(self, passes: int = 1, timeout: float = 60.0) -> bool:
        """Wait until ``passes`` polls have completed since the loader was made."""
        deadline = time.monotonic() + timeout
        with self._pass_done:
            while self.passes < passes:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._pass_done.wait(left)
        return True

    def restore(self) -> None:
        """Take up the state a previous server over the same base directory saved.

        The first :meth:`poll` does it (in the loader's thread, so a server answers
        before it is done); call it first to list the saved runs without reading.
        """
        with self._lock:
            if self._restored:
                return
            self._restored = True
            runs, self._gone = self._db.load(self.store, self.caps)
            self._runs = {run.id: run for run in runs}
            if runs:
                self.version += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self._watch.due(self._links):
                    self.poll()
            except Exception:  # the server keeps serving what it has
                _log.exception("the loader's poll failed; retrying in %.1f s", self.reload_interval)
            if self.passes:  # once the first pass is over: setting up the watch of a large
                self._watch.start()  # tree must not slow a cold start's loading
            self._stop.wait(self.reload_interval)

    def status(self) -> dict[str, Any]:
        """The loading itself, as the health route and the run list say it."""
        return {
            "base_dir": self.location,
            "loading": self.loading,
            "reload_interval": self.reload_interval,
            "truncated": self.truncated,
            "engine": self._reader.engine_used,
            "watching": self._watch.watching,
            "polling_reason": self._watch.reason,
            "requests": self.requests(),
            "reloads": self.passes,
        }

    def requests(self) -> dict[str, dict[str, int] | None] | None:
        """What the storage was asked, where it counts it (object storage; else None):
        ``{"last_reload": ..., "total": ...}``, each the ``listings``, ``stats``, ``gets``
        and ``bytes`` of :meth:`~sumlens.io.remote.RequestStats.snapshot` (``last_reload``
        is None before the first; the total also counts values read back for pages)."""
        if self._counter is None:
            return None
        return {"last_reload": self._last_reload, "total": self._counter.snapshot()}

    # ------------------------------------------------------------------ polling

    def poll(self) -> bool:
        """Walk the base directory once and read whatever changed; True if anything did."""
        self.restore()
        before = None if self._counter is None else self._counter.snapshot()
        found = self._walker.walk()
        if found.truncated and not self.truncated:
            _log.warning(
                "the walk of %s stopped at a bound (%d runs listed); runs beyond it are not shown",
                self.location,
                len(found.runs),
            )
        self.truncated = found.truncated
        self._links = found.links
        changed = self._forget_gone(found)
        if self._mark_unlisted(found):
            changed = True
        saved_at = time.monotonic()
        with self._lock:  # every run is listed (as loading) before any is read
            new = [run for run in found.runs.values() if run.id not in self._runs]
            for found_run in new:
                self._runs[found_run.id] = RunState(found_run.id, str(found_run.path))
            if new:
                self.version += 1
        # runs never read first, so a cold start shows every run's data soon
        runs = sorted(found.runs.values(), key=lambda r: self._runs[r.id].status != "loading")
        for found_run in runs:
            if self._stop.is_set():
                break
            if self._update_run(found_run):
                changed = True
            if self._update_embeddings(found_run):
                changed = True
            if time.monotonic() - saved_at > SAVE_EVERY:
                self._save()
                saved_at = time.monotonic()
        self._save()
        if before is not None and self._counter is not None:
            after = self._counter.snapshot()
            self._last_reload = {name: after[name] - before[name] for name in after}
        with self._pass_done:
            if self.loading:
                self.loading = False
                self.version += 1
            self.passes += 1
            self._pass_done.notify_all()
        return changed

    def _forget_gone(self, found: Discovery) -> bool:
        """Drop the runs no longer found (not those in a directory that cannot be listed)."""
        with self._lock:
            gone = [
                name
                for name in self._runs
                if name not in found.runs and _unlisted_reason(name, found) is None
            ]
            for name in gone:
                self._embeddings.pop(name, None)
                run = self._runs.pop(name)
                self._summaries.pop(name, None)
                for series in run.series.values():
                    self.store.release(series.chunks)
                self._gone.add(name)
                self._dirty.discard(name)
            if gone:
                self.version += 1
            return bool(gone)

    def _mark_unlisted(self, found: Discovery) -> bool:
        """Say which runs' directories cannot be listed now (or can again); True if any
        run's mark changed. A directory that cannot be listed is said once in the log."""
        for name, reason in found.unlisted.items():
            warn_once(
                f"unlisted:{self.location}\0{name}",
                "cannot list %s under %s (%s): its runs are not read while it cannot",
                name,
                self.location,
                reason,
            )
        changed = False
        with self._lock:
            for run in self._runs.values():
                why = None if run.id in found.runs else _unlisted_reason(run.id, found)
                if run.unlisted != why:
                    run.unlisted = why
                    self.changed(run)
                    changed = True
        return changed

    def _update_run(self, found: FoundRun) -> bool:
        with self._lock:
            run = self._runs[found.id]
        if not _changed_files(run, found):
            return False
        try:
            self._reader.read(run, found)
        except Exception as err:  # one run's trouble must not stop the others
            _log.exception("reading run %s failed", found.id)
            with self._lock:
                run.status, run.error = "error", f"{type(err).__name__}: {err}"
        with self._lock:
            if run.status == "loading":
                run.status = "ready"
            run.updated = max((f.mtime_ns for f in found.files), default=0) / 1e9
            self.changed(run)
        return True

    def runs(self) -> list[dict[str, Any]]:
        """Every run's summary; a run with a projector config lists its embeddings as its
        ``embedding`` tags, and one whose config cannot be read says why in its damage
        (the summaries are shared: those are copies)."""
        listed = super().runs()
        with self._lock:
            found = {name: (tags, problem) for name, (_, tags, problem)
                     in self._embeddings.items() if tags or problem}  # fmt: skip
        if not found:
            return listed
        return [_with_embeddings(summary, *found[summary["id"]]) if summary["id"] in found
                else summary for summary in listed]  # fmt: skip

    def beside_file(self, run_id: str, path: str, limit: int) -> bytes | None:
        """A file beside a run's event files, read through the storage (see
        :meth:`~sumlens.board.data.surface.ReadSurface.beside_file`)."""
        parts = beside_parts(path)
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return None
            where = run.path
        for part in parts:
            where = self.storage.join(where, part)
        if self.storage is LOCAL_STORAGE:
            _within(where, run.path, path)
        try:
            info = self.storage.stat(where)
            if not info.is_file:  # a pipe or a device would hold the request until written to
                return None
            if info.size > limit:
                raise BesideFileTooLarge(path, limit)
            with self.storage.open_read(where) as handle:
                data = handle.read(limit + 1)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        if len(data) > limit:  # it grew since
            raise BesideFileTooLarge(path, limit)
        return data

    def _update_embeddings(self, found: FoundRun) -> bool:
        """Read ``found``'s projector config again when it changed; True if it did.

        A config that cannot be read lists no embeddings: it is the run's damage (the run
        list says why) and is said once in the log."""
        config = found.projector
        stamp = None if config is None else (config.size, config.mtime_ns, config.ctime_ns)
        with self._lock:
            known = self._embeddings.get(found.id)
        if (known[0] if known else None) == stamp:
            return False
        tags: tuple[str, ...] = ()
        problem = None
        if stamp is not None:
            try:
                data = self.beside_file(found.id, CONFIG_FILE, CONFIG_LIMIT) or b""
                tags = embedding_tags(data)
            except (OSError, ValueError) as err:
                problem = str(err)
                warn_once(f"projector:{found.path}", "cannot list the embeddings of %s: %s",
                          found.path, err)  # fmt: skip
        with self._lock:
            if stamp is None:
                self._embeddings.pop(found.id, None)
            else:
                self._embeddings[found.id] = (stamp, tags, problem)
            self.version += 1
        return True

    def _save(self) -> None:
        """Save the changed runs: rows made under the lock, written without it (queries go
        on meanwhile), then the segments no series holds any more removed."""
        with self._save_lock:
            with self._lock:
                if not self._dirty and not self._gone:
                    return
                batch = self._db.batch(self.store, self._runs, self._dirty, self._gone)
                self._dirty.clear()
                self._gone.clear()
            self._db.write(batch)
            with self._lock:
                self.store.sweep()


def _with_embeddings(
    summary: dict[str, Any], tags: tuple[str, ...], problem: str | None
) -> dict[str, Any]:
    """A copy of a run's ``summary`` with its projector config's embedding tags and, when the
    config cannot be read, why in its damage."""
    copy = {**summary}
    if tags:
        copy["tags"] = {**summary["tags"], "embedding": sorted(tags)}
    if problem is not None:
        copy["damage"] = {**summary["damage"], "unreadable_projector_config": problem}
    return copy


def _within(path: str, directory: str, named: str) -> None:
    """``ValueError`` when ``path`` (``named`` in the run), links followed, is not inside
    ``directory``, links followed: a link in a run must not lead the dashboard to files
    elsewhere on the machine (a run's directory may itself be a link)."""
    root = os.path.realpath(directory)
    if os.path.commonpath([os.path.realpath(path), root]) != root:
        raise ValueError(f"path={named!r} leads outside the run's directory through a link")


def _changed_files(run: RunState, found: FoundRun) -> bool:
    """Whether the walk found ``run``'s files other than they were last read."""
    if run.status == "loading" or len(found.files) != len(run.files):
        return True
    for file in found.files:
        state = run.files.get(file.name)
        if state is None or (state.size, state.mtime_ns, state.ctime_ns) != (
            file.size,
            file.mtime_ns,
            file.ctime_ns,
        ):
            return True
    return False


def _unlisted_reason(run_id: str, found: Discovery) -> str | None:
    """Why the directory of ``run_id`` (or one above it) could not be listed, or None."""
    for name, reason in found.unlisted.items():
        if run_id == name or run_id.startswith(name.rstrip("/") + "/"):
            return reason
    return None
