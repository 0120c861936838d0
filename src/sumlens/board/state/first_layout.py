"""Annotation files of the first layout, moved to locations once (a SQLite file only).

sumlens first kept annotations in a table ``annotations`` keyed by (base directory, run
id), so one run served from two directories had two rows, and serving it from a third
showed neither. Migration 1 moves such rows to ``run_annotations``, keyed by the run's
location; two rows of one run (or a row already there) are joined: tags of both, both
notes, the first colour, within a run's bounds.
"""

from __future__ import annotations

import json
import logging

from sumlens.board.state.annotation_checks import (
    MAX_NOTE_CHARS,
    MAX_TAGS,
    Annotation,
    stored_tags,
)
from sumlens.board.state.backend import Dialect, Tx
from sumlens.board.state.locations import run_location

_log = logging.getLogger("sumlens.board")

_FIRST_LAYOUT = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'annotations'"


def move_named_rows(tx: Tx, dialect: Dialect) -> None:
    """Move the rows of the first layout to ``run_annotations`` and drop its table, in
    ``tx`` (the migration's transaction); nothing when there is no such table."""
    if dialect.name != "sqlite" or tx.one(_FIRST_LAYOUT) is None:
        return
    moved: dict[str, Annotation] = {}
    for base_dir, run_id, tags, note, colour in tx.rows(
        "SELECT base_dir, run, tags, note, colour FROM annotations ORDER BY base_dir, run"
    ):
        location = run_location(base_dir, run_id)
        found = Annotation(tuple(json.loads(tags)), note, colour)
        moved[location] = _joined(moved[location], found, location) if location in moved else found
    for location, annotation in moved.items():
        there = tx.one(
            "SELECT tags, note, colour FROM run_annotations WHERE location = ?", (location,)
        )
        if there is not None:
            tags, note, colour = there
            annotation = _joined(Annotation(tuple(json.loads(tags)), note, colour),
                                 annotation, location)  # fmt: skip
        tx.execute(
            "INSERT OR REPLACE INTO run_annotations VALUES (?, ?, ?, ?)",
            (location, stored_tags(annotation), annotation.note, annotation.colour),
        )
    tx.execute("DROP TABLE annotations")


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
