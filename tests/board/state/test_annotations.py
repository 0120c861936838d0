"""The run annotations' store (``board/state/annotations.py``) on each database: what it
keeps survives a new store over the same state, base directories do not see each other's,
nothing is written until something is annotated, an import merges all or nothing, and
every bad field is refused with its name."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sumlens.board.errors import QueryError
from sumlens.board.state import FILE_NAME, SharedState, open_state
from sumlens.board.state.annotation_checks import (
    EMPTY,
    MAX_NOTE_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    Annotation,
    parse_annotation,
    parse_import,
)
from sumlens.board.state.annotations import AnnotationStore

Opener = Callable[[Path, str], AnnotationStore]


@pytest.fixture
def store_of(state_url: str | None) -> Iterator[Opener]:
    """Opens the annotations of a base directory in a workspace, over the test's one state
    (a workspace's SQLite file, or one PostgreSQL database); closed after the test."""
    opened: list[SharedState] = []

    def store(workspace: Path, base_dir: str) -> AnnotationStore:
        opened.append(open_state(workspace, base_dir, state_url))
        return opened[-1].annotations

    yield store
    for state in opened:
        state.close()


def _body(tags: object = (), note: object = "", colour: object = None) -> dict:
    return {"tags": list(tags) if isinstance(tags, tuple) else tags, "note": note, "colour": colour}


def test_annotations_survive_a_new_store_and_stay_in_the_workspace(
    tmp_path: Path, store_of: Opener, state_url: str | None
) -> None:
    workspace = tmp_path / "workspace"
    store = store_of(workspace, "/logs/a")
    assert store.get("./r1") == EMPTY
    assert not workspace.exists()  # nothing annotated: nothing written
    before = store.version
    stored = store.put("./r1", Annotation(("baseline", "lr=0.1"), "diverged at 3k", "#1f77b4"))
    assert store.version == before + 1
    store.put("./r2", Annotation(("ablation",)))
    if state_url is None:
        assert [path.name for path in workspace.iterdir()] == [FILE_NAME]
    else:
        assert not workspace.exists()  # all in the database

    again = store_of(workspace, "/logs/a")
    assert again.get("./r1") == stored
    assert list(again.all()) == ["./r1", "./r2"]
    assert store_of(workspace, "/logs/b").all() == {}  # another base directory

    unchanged = again.version
    again.put("./r1", stored)  # the same again: no change, no version
    assert again.version == unchanged
    again.put("./r2", EMPTY)  # an empty annotation removes the row
    assert list(store_of(workspace, "/logs/a").all()) == ["./r1"]
    if state_url is None:
        with sqlite3.connect(workspace / FILE_NAME) as db:
            rows = db.execute("SELECT location FROM run_annotations").fetchall()
        assert rows == [("/logs/a/r1",)]


def test_an_import_merges_tags_and_takes_the_note_and_colour_it_gives(
    tmp_path: Path, store_of: Opener
) -> None:
    store = store_of(tmp_path, "/logs")
    store.put("./a", Annotation(("seed=1",), "mine", "#000000"))
    store.put("./b", Annotation(("keep",), "kept note"))
    counts = store.merge(
        {
            "./a": Annotation(("seed=1", "good"), "", None),
            "./b": Annotation(("keep",), "kept note"),
            "./c": Annotation(("new",), "theirs", "#ABCDEF".lower()),
        }
    )
    assert counts == {"added": 1, "updated": 1, "unchanged": 1, "group_colours": 0}
    assert store.get("./a") == Annotation(("seed=1", "good"), "mine", "#000000")
    assert store.get("./c") == Annotation(("new",), "theirs", "#abcdef")
    assert store_of(tmp_path, "/logs").all() == store.all()


def test_an_import_that_would_pass_the_tag_limit_imports_nothing(
    tmp_path: Path, store_of: Opener
) -> None:
    store = store_of(tmp_path, "/logs")
    store.put("./a", Annotation(tuple(f"t{i}" for i in range(MAX_TAGS))))
    version = store.version
    with pytest.raises(QueryError, match=r"annotations\['./a'\]\.tags.*nothing was imported"):
        store.merge({"./b": Annotation(("x",)), "./a": Annotation(("one more",))})
    assert "./b" not in store.all()
    assert "./b" not in store_of(tmp_path, "/logs").all()
    assert store.version == version  # rolled back, the counter too


def test_an_import_merges_into_what_another_store_wrote(tmp_path: Path, store_of: Opener) -> None:
    """A store whose copy is old (another replica wrote since) merges into what is stored,
    not into its copy: the other's tags are kept."""
    mine, theirs = store_of(tmp_path, "/logs"), store_of(tmp_path, "/logs")
    mine.put("./a", Annotation(("first",)))
    assert theirs.get("./a") == Annotation(("first",))
    mine.put("./a", Annotation(("first", "second")))
    counts = theirs.merge({"./a": Annotation(("third",))})  # theirs still holds ("first",)
    assert counts["updated"] == 1
    assert theirs.get("./a").tags == ("first", "second", "third")


def test_group_colours_are_kept_per_base_directory(tmp_path: Path, store_of: Opener) -> None:
    store = store_of(tmp_path, "/logs")
    assert store.put_group_colour("lr=0.1", "#aa3377") == "#aa3377"
    version = store.version
    assert store.put_group_colour("lr=0.1", "#aa3377") == "#aa3377"
    assert store.version == version  # unchanged: no write
    assert store_of(tmp_path, "/logs").group_colours() == {"lr=0.1": "#aa3377"}
    assert store_of(tmp_path, "/other").group_colours() == {}
    store.put_group_colour("lr=0.1", None)
    assert store_of(tmp_path, "/logs").group_colour("lr=0.1") is None


def test_a_body_is_checked_and_normalised() -> None:
    parsed = parse_annotation(_body([" a ", "b", "a"], "note\nline 2", "#AbCdEf"))
    assert parsed == Annotation(("a", "b"), "note\nline 2", "#abcdef")
    assert parse_annotation(_body()) == EMPTY


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (_body([""]), "tags[0]=''"),
        (_body(["ok", "   "]), "tags[1]='   '"),
        (_body(["x" * (MAX_TAG_CHARS + 1)]), f"at most {MAX_TAG_CHARS} characters"),
        (_body(["a,b"]), "tags[0]='a,b'"),
        (_body([3]), "tags[0]=3"),
        (_body("a"), "tags='a'"),
        (_body([f"t{i}" for i in range(MAX_TAGS + 1)]), f"at most {MAX_TAGS} tags"),
        (_body(note="n" * (MAX_NOTE_CHARS + 1)), "note has 10,001 characters"),
        (_body(note=None), "note=None"),
        (_body(colour="red"), "colour='red'"),
        (_body(colour="#12345"), "colour='#12345'"),
        (_body(colour="#1234567"), "colour='#1234567'"),
        ({"tags": [], "note": ""}, "missing colour"),
        ({**_body(), "color": "#000000"}, "unknown 'color'"),
        ([], "an annotation is a JSON object"),
    ],
)
def test_a_bad_field_is_named(body: object, named: str) -> None:
    with pytest.raises(QueryError) as caught:
        parse_annotation(body)
    assert named in str(caught.value)


def test_an_import_body_is_checked_whole() -> None:
    base, parsed = parse_import({"base_dir": "/theirs", "annotations": {"./a": _body(["x"])}})
    assert (base, parsed) == ("/theirs", {"./a": Annotation(("x",))})
    with pytest.raises(QueryError, match=r"annotations\['./b'\]\.colour='blue'"):
        parse_import({"annotations": {"./a": _body(), "./b": _body(colour="blue")}})
    with pytest.raises(QueryError, match="unknown fields 'runs'"):
        parse_import({"annotations": {}, "runs": []})
    with pytest.raises(QueryError, match="as GET /api/v1/annotations answers"):
        parse_import({"./a": _body()})
    with pytest.raises(QueryError, match=r"annotations\[''\]=''.*run id"):
        parse_import({"annotations": {"": _body()}})
