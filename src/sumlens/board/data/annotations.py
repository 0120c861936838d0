"""Run annotations: the tags, note and colour a user gives a run, kept in the workspace,
with the colours chosen for groups of runs (the Scalars view's groups, by name).

Annotations are the user's own words, not something read from the logs, so they live apart
from everything that can be rebuilt: one SQLite file, ``<workspace>/annotations.sqlite``
(not the column cache, whose tables are dropped whenever its layout changes), and never in
the base directory (logs may be read-only, shared with others, or in a bucket). A run's
row is keyed by the run's location (:func:`run_location`: its directory's path, or URL on
object storage), not by its name under the base directory, so one workspace serves many
base directories and a run keeps its annotation whether it is served from its parent, its
own directory or any directory above, and across server restarts. Files of the first
layout, keyed by (base directory, run id), are moved to locations when first opened (two
rows of one run joined: tags of both, both notes, the first colour). Group colours are a
table of their own in the same file, keyed by (base directory, group name).

The file is made at the first write: a server nobody annotates leaves nothing behind. A
store loads the rows of its base directory's runs once and writes each change through;
:attr:`AnnotationStore.version` moves on every change, so the run list's version (and its
ETag) moves with it and polling pages see the change.

Bounds: an import holds at most :data:`MAX_IMPORT_RUNS` runs, and may not take the file
past :data:`MAX_ANNOTATIONS` annotated runs or :data:`MAX_ANNOTATION_CHARS` characters of
tags and notes (:class:`AnnotationLimit`, HTTP 413, naming the limit; nothing of it is
stored). A user's own edits of served runs are never refused for them (there are only as
many as runs served). The export is read in pages (:meth:`AnnotationStore.page`).

:func:`parse_annotation`, :func:`parse_colour`, :func:`check_group_name`,
:func:`parse_import` and :func:`parse_imported_group_colours` are the one check of what a
client sends;
their errors (:class:`~sumlens.board.errors.QueryError`, HTTP 422) name the field, the value
and what is allowed.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import logging
import re
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sumlens.board.errors import QueryError

_log = logging.getLogger("sumlens.board")

FILE_NAME = "annotations.sqlite"
"""The annotations' file in the workspace folder."""
MAX_TAGS = 50
MAX_TAG_CHARS = 64
MAX_NOTE_CHARS = 10_000
MAX_RUN_ID_CHARS = 4_096
MAX_IMPORT_RUNS = 10_000
"""The most runs one import holds."""
MAX_ANNOTATIONS = 20_000
"""The most annotated runs an import may leave in the workspace's file (all base
directories together)."""
MAX_ANNOTATION_CHARS = 20_000_000
"""The most characters of tags and notes (as stored) an import may leave in the file."""
MAX_PAGE = 1_000
"""The most annotations one page of the export holds."""
MAX_GROUP_CHARS = 1_024
MAX_GROUP_COLOURS = 10_000
"""The most group colours the workspace keeps for one base directory (an import, or a
colour picked for a new group, past it is refused, naming it)."""
FIELDS = ("tags", "note", "colour")
PAGE_FIELDS = ("next", "total")
"""What a page of the export holds besides an import's fields."""
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Annotation:
    """A run's tags (in the order given, no repeats), note and colour (``#rrggbb`` or None)."""

    tags: tuple[str, ...] = ()
    note: str = ""
    colour: str | None = None

    @property
    def empty(self) -> bool:
        """Whether it says nothing (such an annotation is not stored)."""
        return not self.tags and not self.note and self.colour is None

    def as_json(self) -> dict[str, Any]:
        """The ``annotation`` of a run list entry, and of the routes."""
        return {"tags": list(self.tags), "note": self.note, "colour": self.colour}

    def merged(self, incoming: Annotation) -> Annotation:
        """This annotation with ``incoming``'s (an import): tags joined, the note and the
        colour taken from ``incoming`` where it gives them."""
        tags = self.tags + tuple(tag for tag in incoming.tags if tag not in self.tags)
        return Annotation(tags, incoming.note or self.note, incoming.colour or self.colour)


EMPTY = Annotation()


class AnnotationLimit(QueryError):
    """An import past a stated bound of the annotations (:data:`MAX_IMPORT_RUNS`,
    :data:`MAX_ANNOTATIONS`, :data:`MAX_ANNOTATION_CHARS`): too large to take."""

    status = 413


def run_location(base_dir: str, run_id: str) -> str:
    """Where run ``run_id`` (``./`` or ``./a/b``) of ``base_dir`` (a path or URL) lies:
    ``base_dir`` itself, or ``base_dir/a/b``; what a run's annotation is keyed by."""
    base = _normal(base_dir)
    rest = run_id[2:] if run_id.startswith("./") else run_id
    return base if not rest else _prefix(base) + rest


def _normal(base_dir: str) -> str:
    """``base_dir`` without trailing slashes (the root stays ``/``)."""
    return base_dir.rstrip("/") or "/"


def _prefix(base: str) -> str:
    """What the locations of the runs below ``base`` (normal) start with."""
    return base if base.endswith("/") else base + "/"


def _stored_tags(annotation: Annotation) -> str:
    """The tags as the file keeps them (a JSON list)."""
    return json.dumps(list(annotation.tags))


def _size(annotation: Annotation) -> int:
    """Characters of tags and note as the file keeps them (what SQLite's LENGTH counts)."""
    return 0 if annotation.empty else len(_stored_tags(annotation)) + len(annotation.note)


def _joined(first: Annotation, second: Annotation, location: str) -> Annotation:
    """Two annotations of run ``location`` kept under two names (the first layout): tags of
    both, both notes (one when they are the same), the first colour; kept within a run's
    bounds (:data:`MAX_TAGS`, :data:`MAX_NOTE_CHARS`), so the page can still save the run's
    annotation, and what did not fit is said in the log."""
    tags = first.tags + tuple(tag for tag in second.tags if tag not in first.tags)
    notes = [note for note in dict.fromkeys((first.note, second.note)) if note]
    note = "\n\n".join(notes)
    if len(tags) > MAX_TAGS or len(note) > MAX_NOTE_CHARS:
        _log.warning(
            "the annotations of %s kept under two names were joined; past a run's bounds, "
            "left out: tags %s, %d characters at the end of the note",
            location,
            list(tags[MAX_TAGS:]),
            max(0, len(note) - MAX_NOTE_CHARS),
        )
    return Annotation(tags[:MAX_TAGS], note[:MAX_NOTE_CHARS], first.colour or second.colour)


def _tag(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise QueryError(f"{where}={value!r} is not allowed: a tag is a string")
    tag = value.strip()
    if not tag:
        raise QueryError(f"{where}={value!r} is not allowed: a tag may not be empty")
    if len(tag) > MAX_TAG_CHARS:
        raise QueryError(
            f"{where}={value!r} is not allowed: a tag is at most {MAX_TAG_CHARS} characters "
            f"(this one has {len(tag)})"
        )
    if "," in tag or _CONTROL.search(tag):
        raise QueryError(
            f"{where}={value!r} is not allowed: a tag holds no comma and no control character"
        )
    return tag


def parse_annotation(body: Any, where: str = "") -> Annotation:
    """The annotation ``body`` (a JSON object of exactly ``tags``, ``note`` and ``colour``)
    gives; a :class:`QueryError` naming the field (``where`` + field) when it is not allowed."""
    if not isinstance(body, dict):
        raise QueryError(
            f"{where or 'body'}={body!r:.80} is not allowed: an annotation is a JSON object "
            'of "tags", "note" and "colour"'
        )
    missing = [name for name in FIELDS if name not in body]
    unknown = sorted(set(body) - set(FIELDS))
    if missing or unknown:
        said = [f"missing {', '.join(missing)}"] if missing else []
        said += [f"unknown {', '.join(map(repr, unknown))}"] if unknown else []
        raise QueryError(
            f"{where or 'body'} is not allowed ({'; '.join(said)}): an annotation has exactly "
            '"tags" (a list of strings), "note" (a string) and "colour" ("#rrggbb" or null)'
        )
    tags, note, colour = body["tags"], body["note"], body["colour"]
    if not isinstance(tags, list):
        raise QueryError(f"{where}tags={tags!r:.80} is not allowed: tags are a list of strings")
    if len(tags) > MAX_TAGS:
        raise QueryError(f"{where}tags has {len(tags)} entries: a run has at most {MAX_TAGS} tags")
    parsed = tuple(dict.fromkeys(_tag(tag, f"{where}tags[{i}]") for i, tag in enumerate(tags)))
    if not isinstance(note, str):
        raise QueryError(f"{where}note={note!r:.80} is not allowed: a note is a string")
    if len(note) > MAX_NOTE_CHARS:
        raise QueryError(
            f"{where}note has {len(note):,} characters: a note is at most "
            f"{MAX_NOTE_CHARS:,} characters"
        )
    return Annotation(parsed, note, parse_colour(colour, f"{where}colour"))


def parse_colour(colour: Any, where: str = "colour") -> str | None:
    """``colour`` as lower-case ``#rrggbb``, or None for null; a :class:`QueryError` naming
    ``where`` when it is neither."""
    if colour is not None and not (isinstance(colour, str) and _COLOUR.fullmatch(colour)):
        raise QueryError(
            f'{where}={colour!r:.80} is not allowed: a colour is "#rrggbb" '
            "(six hexadecimal digits) or null"
        )
    return colour.lower() if colour else None


def check_group_name(name: Any, where: str = "group") -> str:
    """``name`` when it can name a group (a non-empty string of sane length)."""
    if not isinstance(name, str) or not name or len(name) > MAX_GROUP_CHARS:
        raise QueryError(
            f"{where}={name!r:.80} is not allowed: a group name is a non-empty string of at "
            f"most {MAX_GROUP_CHARS:,} characters"
        )
    return name


def check_run_id(run_id: Any, where: str = "run") -> str:
    """``run_id`` when it can name a run: a string of sane length in the run list's one
    spelling, ``./`` or ``./a/b`` (no empty, ``.`` or ``..`` part, no ``/`` at the end).
    One spelling per run, so two names of an import never fall on one location
    (:func:`run_location`) and one silently replace the other."""
    if not isinstance(run_id, str) or not run_id or len(run_id) > MAX_RUN_ID_CHARS:
        raise QueryError(
            f"{where}={run_id!r:.80} is not allowed: a run id is a non-empty string of at "
            f"most {MAX_RUN_ID_CHARS} characters"
        )
    rest = run_id[2:] if run_id.startswith("./") else None
    if rest is None or (rest and any(part in ("", ".", "..") for part in rest.split("/"))):
        raise QueryError(
            f"{where}={run_id!r:.80} is not allowed: a run id is spelt as the run list "
            "spells it, './' or './a/b' (no empty, '.' or '..' part, no '/' at the end)"
        )
    return run_id


def parse_import(body: Any) -> tuple[str | None, dict[str, Annotation]]:
    """The base directory (None when not given) and the annotations of an import body, the
    JSON ``GET /api/v1/annotations`` answers; all checked before any is stored."""
    if not isinstance(body, dict) or not isinstance(body.get("annotations"), dict):
        raise QueryError(
            'body is not allowed: an import is a JSON object {"base_dir": ..., '
            '"annotations": {run id: annotation}} as GET /api/v1/annotations answers'
        )
    unknown = sorted(set(body) - {"base_dir", "annotations", "group_colours", *PAGE_FIELDS})
    if unknown:
        raise QueryError(
            f"body holds unknown fields {', '.join(map(repr, unknown))}: an import has "
            '"base_dir", "annotations" and (optionally) "group_colours" (a page of the '
            'export may be imported as it is: its "next" and "total" are left aside)'
        )
    base_dir = body.get("base_dir")
    if base_dir is not None and not isinstance(base_dir, str):
        raise QueryError(f"base_dir={base_dir!r:.80} is not allowed: a string or null")
    given = body["annotations"]
    if len(given) > MAX_IMPORT_RUNS:
        raise AnnotationLimit(
            f"annotations holds {len(given):,} runs: an import holds at most "
            f"{MAX_IMPORT_RUNS:,} (MAX_IMPORT_RUNS); import the file in parts"
        )
    parsed = {}
    for run_id, each in given.items():
        where = f"annotations[{run_id!r:.80}]"
        parsed[check_run_id(run_id, where)] = parse_annotation(each, f"{where}.")
    return base_dir, parsed


def parse_imported_group_colours(body: dict[str, Any]) -> dict[str, str]:
    """The group colours of an import body :func:`parse_import` accepted: its optional
    ``group_colours``, ``{group name: "#rrggbb"}`` (none in files made before them)."""
    given = body.get("group_colours", {})
    if not isinstance(given, dict):
        raise QueryError(
            f'group_colours={given!r:.80} is not allowed: a JSON object of group name -> "#rrggbb"'
        )
    if len(given) > MAX_GROUP_COLOURS:
        raise AnnotationLimit(
            f"group_colours holds {len(given):,} groups: an import holds at most "
            f"{MAX_GROUP_COLOURS:,} (MAX_GROUP_COLOURS)"
        )
    parsed = {}
    for name, colour in given.items():
        where = f"group_colours[{name!r:.80}]"
        chosen = parse_colour(colour, where)
        if chosen is None:
            raise QueryError(f'{where}=None is not allowed: an imported colour is "#rrggbb"')
        parsed[check_group_name(name, where)] = chosen
    return parsed


class AnnotationStore:
    """The annotations of the runs of ``base_dir`` (as the run list names it: a path or a
    URL) and the colours of its groups, kept in the SQLite file at ``path``.

    Thread-safe; reads are answered from memory. Runs are named by their ids under
    ``base_dir``; rows are keyed by the runs' locations (:func:`run_location`)."""

    def __init__(self, path: Path, base_dir: str) -> None:
        self.path = path
        self.base_dir = base_dir
        self.version = 0
        """Moves on every change."""
        self._base = _normal(base_dir)
        self._lock = threading.Lock()
        self._rows: dict[str, Annotation] | None = None  # by run id, loaded at the first use
        self._order: list[str] | None = None  # the run ids sorted, made when a page is asked
        self._groups: dict[str, str] = {}  # group name -> colour, loaded with ``_rows``

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
        with self._lock:
            if self._loaded().get(run_id, EMPTY) != annotation:
                self._write({run_id: annotation})
            return annotation

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
        with self._lock:
            self._loaded()
            if self._groups.get(name) != colour:
                if colour is not None:
                    self._check_group_room({name})
                self._write({}, {name: colour})
            return colour

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

    def merge(
        self, incoming: Mapping[str, Annotation], group_colours: Mapping[str, str] | None = None
    ) -> dict[str, int]:
        """Merge imported annotations into the stored ones (:meth:`Annotation.merged`) and
        imported group colours over the stored ones, all or none, in one transaction;
        counts of runs ``added``, ``updated`` and ``unchanged``, and of ``group_colours``
        changed. :class:`AnnotationLimit` when it would pass :data:`MAX_ANNOTATIONS` or
        :data:`MAX_ANNOTATION_CHARS`."""
        with self._lock:
            rows = self._loaded()
            groups = {
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
                grown += _size(after) - _size(before)
                changes[run_id] = after
            if counts["added"] or grown > 0:
                self._check_room(counts["added"], grown)
            self._check_group_room({name for name, colour in groups.items() if colour})
            if changes or groups:
                self._write(changes, groups)
            return {**counts, "group_colours": len(groups)}

    def _check_room(self, added: int, grown: int) -> None:
        """:class:`AnnotationLimit` when ``added`` more annotated runs and ``grown`` more
        characters would take the file past its bounds."""
        held, size = 0, 0
        if self.path.is_file():
            with self._connect() as db:
                held, size = db.execute(
                    "SELECT COUNT(*), COALESCE(SUM(LENGTH(tags) + LENGTH(note)), 0) "
                    "FROM run_annotations"
                ).fetchone()
        if held + added > MAX_ANNOTATIONS:
            raise AnnotationLimit(
                f"the import adds {added:,} annotated runs to the {held:,} the workspace "
                f"holds: it holds at most {MAX_ANNOTATIONS:,} (MAX_ANNOTATIONS); nothing "
                "was imported"
            )
        if size + grown > MAX_ANNOTATION_CHARS:
            raise AnnotationLimit(
                f"the import adds {grown:,} characters of tags and notes to the {size:,} the "
                f"workspace holds: it holds at most {MAX_ANNOTATION_CHARS:,} "
                "(MAX_ANNOTATION_CHARS); nothing was imported"
            )

    def _sorted(self) -> list[str]:
        if self._order is None:
            self._order = sorted(self._loaded())
        return self._order

    def _run_id(self, location: str) -> str | None:
        """The id of the run at ``location`` under the base directory (None: not below)."""
        if location == self._base:
            return "./"
        prefix = _prefix(self._base)
        return "./" + location[len(prefix) :] if location.startswith(prefix) else None

    def _loaded(self) -> dict[str, Annotation]:
        if self._rows is None:
            self._rows = {}
            if self.path.is_file():
                prefix = _prefix(self._base)
                with self._connect() as db:
                    for location, tags, note, colour in db.execute(
                        "SELECT location, tags, note, colour FROM run_annotations "
                        "WHERE location = ? OR (location >= ? AND location < ?)",
                        (self._base, prefix, prefix[:-1] + "0"),  # "0" follows "/"
                    ):
                        run_id = self._run_id(location)
                        if run_id is not None:
                            self._rows[run_id] = Annotation(tuple(json.loads(tags)), note, colour)
                    self._groups = dict(
                        db.execute(
                            "SELECT name, colour FROM group_colours WHERE base_dir = ?",
                            (self.base_dir,),
                        ).fetchall()
                    )
        return self._rows

    def _write(
        self, changes: Mapping[str, Annotation], groups: Mapping[str, str | None] | None = None
    ) -> None:
        """Write ``changes`` and group colours ``groups`` (None clears one) in one
        transaction, then take them up in memory."""
        groups = groups or {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db, db:  # the inner ``with db``: one transaction
            for run_id, annotation in changes.items():
                location = run_location(self._base, run_id)
                if annotation.empty:
                    db.execute("DELETE FROM run_annotations WHERE location = ?", (location,))
                    continue
                db.execute(
                    "INSERT OR REPLACE INTO run_annotations VALUES (?, ?, ?, ?)",
                    (location, _stored_tags(annotation), annotation.note, annotation.colour),
                )
            for name, colour in groups.items():
                if colour is None:
                    db.execute(
                        "DELETE FROM group_colours WHERE base_dir = ? AND name = ?",
                        (self.base_dir, name),
                    )
                else:
                    db.execute(
                        "INSERT OR REPLACE INTO group_colours VALUES (?, ?, ?)",
                        (self.base_dir, name, colour),
                    )
        rows = self._loaded()
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
        self._order = None
        self.version += 1

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection to the file (made with its tables when new; a file made before group
        colours gains their table, one of the first layout has its rows moved to
        locations), closed after use: writes are rare, and a store that holds no
        connection needs no closing."""
        db = sqlite3.connect(self.path, timeout=10.0)
        try:
            db.execute(
                "CREATE TABLE IF NOT EXISTS run_annotations (location TEXT PRIMARY KEY, "
                "tags TEXT NOT NULL, note TEXT NOT NULL, colour TEXT)"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS group_colours (base_dir TEXT NOT NULL, "
                "name TEXT NOT NULL, colour TEXT NOT NULL, PRIMARY KEY (base_dir, name))"
            )
            _move_named_rows(db)
            yield db
        finally:
            db.close()


_FIRST_LAYOUT = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'annotations'"


def _move_named_rows(db: sqlite3.Connection) -> None:
    """Move the rows of the first layout (table ``annotations``, keyed by the base directory
    and the run id under it) to ``run_annotations``, keyed by the run's location, in one
    transaction; rows that name one run twice (or a row already there) are joined."""
    if db.execute(_FIRST_LAYOUT).fetchone() is None:
        return
    db.execute("BEGIN IMMEDIATE")  # another server may be moving them now: one does
    try:
        if db.execute(_FIRST_LAYOUT).fetchone() is not None:
            moved: dict[str, Annotation] = {}
            for base_dir, run_id, tags, note, colour in db.execute(
                "SELECT base_dir, run, tags, note, colour FROM annotations ORDER BY base_dir, run"
            ):
                location = run_location(base_dir, run_id)
                found = Annotation(tuple(json.loads(tags)), note, colour)
                moved[location] = (
                    _joined(moved[location], found, location) if location in moved else found
                )
            for location, annotation in moved.items():
                there = db.execute(
                    "SELECT tags, note, colour FROM run_annotations WHERE location = ?",
                    (location,),
                ).fetchone()
                if there is not None:
                    tags, note, colour = there
                    annotation = _joined(Annotation(tuple(json.loads(tags)), note, colour),
                                         annotation, location)  # fmt: skip
                db.execute(
                    "INSERT OR REPLACE INTO run_annotations VALUES (?, ?, ?, ?)",
                    (location, _stored_tags(annotation), annotation.note, annotation.colour),
                )
            db.execute("DROP TABLE annotations")
        db.commit()
    except BaseException:
        db.rollback()
        raise


def workspace_store(workspace: Path, base_dir: str) -> AnnotationStore:
    """The annotations of ``base_dir`` kept in ``workspace`` (``~`` expanded)."""
    return AnnotationStore(Path(workspace).expanduser() / FILE_NAME, base_dir)
