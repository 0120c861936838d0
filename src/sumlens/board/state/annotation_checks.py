"""What a client may send as run annotations and group colours, checked in one place.

:func:`parse_annotation`, :func:`parse_colour`, :func:`check_group_name`,
:func:`check_run_id`, :func:`parse_import` and :func:`parse_imported_group_colours` are the
one check of what a client sends; their errors (:class:`~sumlens.board.errors.QueryError`,
HTTP 422) name the field, the value and what is allowed. The bounds of one run's
annotation and of an import are stated here; :class:`AnnotationLimit` (HTTP 413) is an
import past them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from sumlens.board.errors import QueryError

MAX_TAGS = 50
MAX_TAG_CHARS = 64
MAX_NOTE_CHARS = 10_000
MAX_RUN_ID_CHARS = 4_096
MAX_IMPORT_RUNS = 10_000
"""The most runs one import holds."""
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
    the state's bounds in :mod:`sumlens.board.state.annotations`): too large to take."""

    status = 413


def stored_tags(annotation: Annotation) -> str:
    """The tags as the file keeps them (a JSON list)."""
    return json.dumps(list(annotation.tags))


def size(annotation: Annotation) -> int:
    """Characters of tags and note as the file keeps them (what SQLite's LENGTH counts)."""
    return 0 if annotation.empty else len(stored_tags(annotation)) + len(annotation.note)


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
