"""Run annotations: the tags, note and colour a user gives a run, with the colours chosen
for groups of runs (the Scalars view's groups, by name), kept in the shared state.

Annotations are the user's own words, not something read from the logs, so they live
apart from everything that can be rebuilt (never in the column cache, whose tables are
dropped whenever its layout changes, nor in the base directory: logs may be read-only,
shared with others, or in a bucket). A run's row is keyed by the run's location
(:func:`~sumlens.board.state.locations.run_location`), so one state serves many base
directories and a run keeps its annotation whether it is served from its parent, its own
directory or any directory above, and across server restarts. Group colours are keyed by
(base directory, group name).

A store loads the rows of its base directory's runs once and writes each change through,
in one transaction that first bumps the state's change counter
(:func:`~sumlens.board.state.changes.bump`): its :attr:`AnnotationStore.version` is that
counter, so the run list's version (and its ETag) moves with every change, by any replica.
When the counter moved past what the store loaded (another replica wrote), it loads again:
at its next read, or inside a write before the write is worked out, so an import merges
into what is stored, not into an old copy.

Bounds: an import holds at most :data:`MAX_IMPORT_RUNS` runs, and may not take the state
past :data:`MAX_ANNOTATIONS` annotated runs or :data:`MAX_ANNOTATION_CHARS` characters of
tags and notes (:class:`AnnotationLimit`, HTTP 413, naming the limit; nothing of it is
stored). A user's own edits of served runs are never refused for them (there are only as
many as runs served). The export is read in pages (:meth:`AnnotationStore.page`). What a
client sends is checked by :mod:`sumlens.board.state.annotation_checks`.
"""

from __future__ import annotations

import bisect
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from sumlens.board.errors import QueryError
from sumlens.board.state.annotation_checks import (
    EMPTY,
    MAX_GROUP_COLOURS,
    MAX_TAGS,
    Annotation,
    AnnotationLimit,
    size,
    stored_tags,
)
from sumlens.board.state.backend import Backend, Tx
from sumlens.board.state.changes import Changes, bump, read_counter
from sumlens.board.state.locations import below, normal, run_id_at, run_location

MAX_ANNOTATIONS = 20_000
"""The most annotated runs an import may leave in the state (all base directories
together)."""
MAX_ANNOTATION_CHARS = 20_000_000
"""The most characters of tags and notes (as stored) an import may leave in the state."""

Changed = tuple[dict[str, Annotation], dict[str, str | None], Any]
"""What a write works out: runs' new annotations, groups' new colours, and its answer."""

_UPSERT_RUN = (
    "INSERT INTO run_annotations (location, tags, note, colour) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (location) DO UPDATE SET tags = excluded.tags, note = excluded.note, "
    "colour = excluded.colour"
)
_UPSERT_GROUP = (
    "INSERT INTO group_colours (base_dir, name, colour) VALUES (?, ?, ?) "
    "ON CONFLICT (base_dir, name) DO UPDATE SET colour = excluded.colour"
)


class _Unchanged(Exception):
    """A write that found nothing to change: its transaction is rolled back."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer


class AnnotationStore:
    """The annotations of the runs of ``base_dir`` (as the run list names it: a path or a
    URL) and the colours of its groups, kept by ``backend``.

    Thread-safe; reads are answered from memory. Runs are named by their ids under
    ``base_dir``; rows are keyed by the runs' locations."""

    def __init__(self, backend: Backend, changes: Changes, base_dir: str) -> None:
        self.base_dir = base_dir
        self._backend = backend
        self._changes = changes
        self._base = normal(base_dir)
        self._lock = threading.Lock()
        self._rows: dict[str, Annotation] | None = None  # by run id, loaded at the first use
        self._order: list[str] | None = None  # the run ids sorted, made when a page is asked
        self._groups: dict[str, str] = {}  # group name -> colour, loaded with ``_rows``
        self._loaded_at = -1  # the change counter ``_rows`` and ``_groups`` are of

    @property
    def version(self) -> int:
        """Moves on every change (the state's change counter)."""
        return self._changes.counter

    def get(self, run_id: str) -> Annotation:
        """The annotation of ``run_id`` (:data:`EMPTY` when it has none)."""
        with self._lock:
            return self._loaded().get(run_id, EMPTY)

    def all(self) -> dict[str, Annotation]:
        """Every annotated run's annotation, by run id (sorted)."""
        with self._lock:
            rows = self._loaded()
            return {run_id: rows[run_id] for run_id in self._sorted()}

    def page(self, after: str | None, limit: int) -> tuple[dict[str, Annotation], str | None]:
        """At most ``limit`` annotations, by run id (sorted), of the runs after ``after``
        (None: from the first), and the run id to ask the next page after (None: the last)."""
        with self._lock:
            rows = self._loaded()
            order = self._sorted()
            start = 0 if after is None else bisect.bisect_right(order, after)
            chosen = order[start : start + limit]
            more = start + limit < len(order)
            return {run_id: rows[run_id] for run_id in chosen}, chosen[-1] if more else None

    def count(self) -> int:
        """How many runs of the base directory are annotated."""
        with self._lock:
            return len(self._loaded())

    def put(self, run_id: str, annotation: Annotation) -> Annotation:
        """Store ``annotation`` as ``run_id``'s (an empty one removes it); return it."""

        def changed(_: Tx) -> Changed:
            rows = self._rows or {}
            same = rows.get(run_id, EMPTY) == annotation
            return ({} if same else {run_id: annotation}), {}, annotation

        with self._lock:
            if self._loaded().get(run_id, EMPTY) == annotation:
                return annotation
            result: Annotation = self._write(changed)
            return result

    def group_colour(self, name: str) -> str | None:
        """The colour chosen for group ``name`` (None: the automatic one)."""
        with self._lock:
            self._loaded()
            return self._groups.get(name)

    def group_colours(self) -> dict[str, str]:
        """Every chosen group colour, by group name (sorted)."""
        with self._lock:
            self._loaded()
            return {name: self._groups[name] for name in sorted(self._groups)}

    def put_group_colour(self, name: str, colour: str | None) -> str | None:
        """Store ``colour`` as group ``name``'s (None clears it); return it."""

        def changed(_: Tx) -> Changed:
            if self._groups.get(name) == colour:
                return {}, {}, colour
            if colour is not None:
                self._check_group_room({name})
            return {}, {name: colour}, colour

        with self._lock:
            self._loaded()
            if self._groups.get(name) == colour:
                return colour
            result: str | None = self._write(changed)
            return result

    def merge(
        self, incoming: Mapping[str, Annotation], group_colours: Mapping[str, str] | None = None
    ) -> dict[str, int]:
        """Merge imported annotations into the stored ones (:meth:`Annotation.merged`) and
        imported group colours over the stored ones, all or none, in one transaction;
        counts of runs ``added``, ``updated`` and ``unchanged``, and of ``group_colours``
        changed. :class:`AnnotationLimit` when it would pass :data:`MAX_ANNOTATIONS` or
        :data:`MAX_ANNOTATION_CHARS`."""

        def changed(tx: Tx) -> Changed:
            rows = self._rows or {}
            groups: dict[str, str | None] = {
                name: colour
                for name, colour in (group_colours or {}).items()
                if self._groups.get(name) != colour
            }
            changes: dict[str, Annotation] = {}
            counts = {"added": 0, "updated": 0, "unchanged": 0}
            grown = 0  # characters the changes add
            for run_id, annotation in incoming.items():
                before = rows.get(run_id, EMPTY)
                after = before.merged(annotation)
                if len(after.tags) > MAX_TAGS:
                    raise QueryError(
                        f"annotations[{run_id!r:.80}].tags: joined with the tags stored for "
                        f"the run they make {len(after.tags)}, and a run has at most "
                        f"{MAX_TAGS} tags; nothing was imported"
                    )
                if after == before:
                    counts["unchanged"] += 1
                    continue
                counts["added" if before.empty else "updated"] += 1
                grown += size(after) - size(before)
                changes[run_id] = after
            if counts["added"] or grown > 0:
                _check_room(tx, counts["added"], grown)
            self._check_group_room({name for name, colour in groups.items() if colour})
            return changes, groups, {**counts, "group_colours": len(groups)}

        with self._lock:
            result: dict[str, int] = self._write(changed)
            return result

    def _check_group_room(self, names: set[str]) -> None:
        """:class:`AnnotationLimit` when colours for group ``names`` would take this base
        directory's group colours past :data:`MAX_GROUP_COLOURS`."""
        held = len(self._groups.keys() | names)
        if held > MAX_GROUP_COLOURS:
            raise AnnotationLimit(
                f"{held - len(self._groups):,} more group colours would make {held:,}: the "
                f"workspace keeps at most {MAX_GROUP_COLOURS:,} per base directory "
                "(MAX_GROUP_COLOURS); nothing was stored"
            )

    def _sorted(self) -> list[str]:
        if self._order is None:
            self._order = sorted(self._loaded())
        return self._order

    def _loaded(self) -> dict[str, Annotation]:
        """The rows, loaded again when the change counter moved since they were."""
        if self._rows is None or self._loaded_at != self._changes.counter:
            counter = self._backend.read(self._load)
            self._loaded_at = counter
            self._changes.seen(counter)
        assert self._rows is not None
        return self._rows

    def _load(self, tx: Tx) -> int:
        """Read the rows of the base directory's runs and its group colours in ``tx``; the
        change counter they are of (read first: a change after it moves it past them)."""
        counter = read_counter(tx)
        condition, params = below(self._base)
        rows = {}
        for location, tags, note, colour in tx.rows(
            f"SELECT location, tags, note, colour FROM run_annotations WHERE {condition}", params
        ):
            run_id = run_id_at(self._base, location)
            if run_id is not None:
                rows[run_id] = Annotation(tuple(json.loads(tags)), note, colour)
        self._groups = dict(
            tx.rows("SELECT name, colour FROM group_colours WHERE base_dir = ?", (self.base_dir,))
        )
        self._rows = rows
        self._order = None
        return counter

    def _write(self, changed: Callable[[Tx], Changed]) -> Any:
        """Work out a change with ``changed`` (over rows as stored now) and write it, all in
        one transaction, then take it up in memory; ``changed``'s answer. Nothing is
        written (and the counter does not move) when it changes nothing."""

        def work(tx: Tx) -> tuple[int, Changed]:
            counter = bump(self._backend, tx)
            if self._rows is None or self._loaded_at != counter - 1:  # another replica wrote
                self._load(tx)
                self._loaded_at = counter - 1
            found = changed(tx)
            if not found[0] and not found[1]:
                raise _Unchanged(found[2])
            self._store(tx, found[0], found[1])
            return counter, found

        try:
            counter, (changes, groups, answer) = self._backend.write(work)
        except _Unchanged as unchanged:
            return unchanged.answer
        except BaseException:
            self._rows = None  # what memory holds may be past what was stored: load again
            raise
        self._take_up(changes, groups)
        self._loaded_at = counter
        self._changes.seen(counter)
        return answer

    def _store(
        self, tx: Tx, changes: Mapping[str, Annotation], groups: Mapping[str, str | None]
    ) -> None:
        """Write ``changes`` and group colours ``groups`` (None clears one) in ``tx``."""
        gone = [run_location(self._base, run) for run, each in changes.items() if each.empty]
        kept = [
            (run_location(self._base, run), stored_tags(each), each.note, each.colour)
            for run, each in changes.items()
            if not each.empty
        ]
        if gone:
            tx.executemany("DELETE FROM run_annotations WHERE location = ?", [(g,) for g in gone])
        if kept:
            tx.executemany(_UPSERT_RUN, kept)
        cleared = [(self.base_dir, name) for name, colour in groups.items() if colour is None]
        chosen = [(self.base_dir, name, colour) for name, colour in groups.items() if colour]
        if cleared:
            tx.executemany("DELETE FROM group_colours WHERE base_dir = ? AND name = ?", cleared)
        if chosen:
            tx.executemany(_UPSERT_GROUP, chosen)

    def _take_up(self, changes: Mapping[str, Annotation], groups: Mapping[str, str | None]) -> None:
        """Take written ``changes`` and ``groups`` up in memory."""
        rows = self._rows if self._rows is not None else {}
        for run_id, annotation in changes.items():
            if annotation.empty:
                rows.pop(run_id, None)
            else:
                rows[run_id] = annotation
        for name, colour in groups.items():
            if colour is None:
                self._groups.pop(name, None)
            else:
                self._groups[name] = colour
        self._rows = rows
        self._order = None


def _check_room(tx: Tx, added: int, grown: int) -> None:
    """:class:`AnnotationLimit` when ``added`` more annotated runs and ``grown`` more
    characters would take the state past its bounds."""
    row = tx.one(
        "SELECT COUNT(*), COALESCE(SUM(LENGTH(tags) + LENGTH(note)), 0) FROM run_annotations"
    )
    held, size_now = (int(row[0]), int(row[1])) if row is not None else (0, 0)
    if held + added > MAX_ANNOTATIONS:
        raise AnnotationLimit(
            f"the import adds {added:,} annotated runs to the {held:,} the workspace "
            f"holds: it holds at most {MAX_ANNOTATIONS:,} (MAX_ANNOTATIONS); nothing "
            "was imported"
        )
    if size_now + grown > MAX_ANNOTATION_CHARS:
        raise AnnotationLimit(
            f"the import adds {grown:,} characters of tags and notes to the {size_now:,} the "
            f"workspace holds: it holds at most {MAX_ANNOTATION_CHARS:,} "
            "(MAX_ANNOTATION_CHARS); nothing was imported"
        )
