"""Run annotations: the tags, note and colour a user gives a run, kept in the workspace,
with the colours chosen for groups of runs (the Scalars view's groups, by name).

Annotations are the user's own words, not something read from the logs, so they live apart
from everything that can be rebuilt: one SQLite file, ``<workspace>/annotations.sqlite``
(not the column cache, whose tables are dropped whenever its layout changes), and never in
the base directory (logs may be read-only, shared with others, or in a bucket). Rows are
keyed by (base directory as the run list names it, run id), so one workspace serves many
base directories and a run keeps its annotation across server restarts. Group colours are a
table of their own in the same file, keyed by (base directory, group name).

The file is made at the first write: a server nobody annotates leaves nothing behind. A
store loads its base directory's rows once and writes each change through;
:attr:`AnnotationStore.version` moves on every change, so the run list's version (and its
ETag) moves with it and polling pages see the change.

:func:`parse_annotation`, :func:`parse_colour`, :func:`check_group_name`,
:func:`parse_import` and :func:`parse_imported_group_colours` are the one check of what a
client sends;
their errors (:class:`~sumlens.board.errors.QueryError`, HTTP 422) name the field, the value
and what is allowed.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sumlens.board.errors import QueryError

FILE_NAME = "annotations.sqlite"
"""The annotations' file in the workspace folder."""
MAX_TAGS = 50
MAX_TAG_CHARS = 64
MAX_NOTE_CHARS = 10_000
MAX_RUN_ID_CHARS = 4_096
MAX_IMPORT_RUNS = 100_000
MAX_GROUP_CHARS = 1_024
MAX_IMPORT_GROUPS = 100_000
FIELDS = ("tags", "note", "colour")
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
    """``run_id`` when it can name a run (a non-empty string of sane length)."""
    if not isinstance(run_id, str) or not run_id or len(run_id) > MAX_RUN_ID_CHARS:
        raise QueryError(
            f"{where}={run_id!r:.80} is not allowed: a run id is a non-empty string of at "
            f"most {MAX_RUN_ID_CHARS} characters"
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
    unknown = sorted(set(body) - {"base_dir", "annotations", "group_colours"})
    if unknown:
        raise QueryError(
            f"body holds unknown fields {', '.join(map(repr, unknown))}: an import has "
            '"base_dir", "annotations" and (optionally) "group_colours"'
        )
    base_dir = body.get("base_dir")
    if base_dir is not None and not isinstance(base_dir, str):
        raise QueryError(f"base_dir={base_dir!r:.80} is not allowed: a string or null")
    given = body["annotations"]
    if len(given) > MAX_IMPORT_RUNS:
        raise QueryError(
            f"annotations holds {len(given):,} runs: an import holds at most {MAX_IMPORT_RUNS:,}"
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
    if len(given) > MAX_IMPORT_GROUPS:
        raise QueryError(
            f"group_colours holds {len(given):,} groups: an import holds at most "
            f"{MAX_IMPORT_GROUPS:,}"
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
    """The annotations of the runs of ``base_dir`` and the colours of its groups, kept in the
    SQLite file at ``path``.

    Thread-safe; reads are answered from memory."""

    def __init__(self, path: Path, base_dir: str) -> None:
        self.path = path
        self.base_dir = base_dir
        self.version = 0
        """Moves on every change."""
        self._lock = threading.Lock()
        self._rows: dict[str, Annotation] | None = None  # loaded at the first use
        self._groups: dict[str, str] = {}  # group name -> colour, loaded with ``_rows``

    def get(self, run_id: str) -> Annotation:
        """The annotation of ``run_id`` (:data:`EMPTY` when it has none)."""
        with self._lock:
            return self._loaded().get(run_id, EMPTY)

    def all(self) -> dict[str, Annotation]:
        """Every annotated run's annotation, by run id (sorted)."""
        with self._lock:
            rows = self._loaded()
            return {run_id: rows[run_id] for run_id in sorted(rows)}

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
                self._write({}, {name: colour})
            return colour

    def merge(
        self, incoming: Mapping[str, Annotation], group_colours: Mapping[str, str] | None = None
    ) -> dict[str, int]:
        """Merge imported annotations into the stored ones (:meth:`Annotation.merged`) and
        imported group colours over the stored ones, all or none, in one transaction;
        counts of runs ``added``, ``updated`` and ``unchanged``, and of ``group_colours``
        changed."""
        with self._lock:
            rows = self._loaded()
            groups = {
                name: colour
                for name, colour in (group_colours or {}).items()
                if self._groups.get(name) != colour
            }
            changes: dict[str, Annotation] = {}
            counts = {"added": 0, "updated": 0, "unchanged": 0}
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
                changes[run_id] = after
            if changes or groups:
                self._write(changes, groups)
            return {**counts, "group_colours": len(groups)}

    def _loaded(self) -> dict[str, Annotation]:
        if self._rows is None:
            self._rows = {}
            if self.path.is_file():
                with self._connect() as db:
                    for run_id, tags, note, colour in db.execute(
                        "SELECT run, tags, note, colour FROM annotations WHERE base_dir = ?",
                        (self.base_dir,),
                    ):
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
                if annotation.empty:
                    db.execute(
                        "DELETE FROM annotations WHERE base_dir = ? AND run = ?",
                        (self.base_dir, run_id),
                    )
                    continue
                db.execute(
                    "INSERT OR REPLACE INTO annotations VALUES (?, ?, ?, ?, ?)",
                    (
                        self.base_dir,
                        run_id,
                        json.dumps(list(annotation.tags)),
                        annotation.note,
                        annotation.colour,
                    ),
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
        self.version += 1

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection to the file (made with its tables when new; a file made before group
        colours gains their table), closed after use: writes are rare, and a store that holds
        no connection needs no closing."""
        db = sqlite3.connect(self.path, timeout=10.0)
        try:
            db.execute(
                "CREATE TABLE IF NOT EXISTS annotations (base_dir TEXT NOT NULL, "
                "run TEXT NOT NULL, tags TEXT NOT NULL, note TEXT NOT NULL, colour TEXT, "
                "PRIMARY KEY (base_dir, run))"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS group_colours (base_dir TEXT NOT NULL, "
                "name TEXT NOT NULL, colour TEXT NOT NULL, PRIMARY KEY (base_dir, name))"
            )
            yield db
        finally:
            db.close()


def workspace_store(workspace: Path, base_dir: str) -> AnnotationStore:
    """The annotations of ``base_dir`` kept in ``workspace`` (``~`` expanded)."""
    return AnnotationStore(Path(workspace).expanduser() / FILE_NAME, base_dir)
