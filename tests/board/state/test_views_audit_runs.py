"""Saved views, the audit log and run states with the trash (``board/state/views.py``,
``audit.py``, ``runs.py``), on each database: what each keeps, its bounds, and errors that
name the value and what is allowed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sumlens.board.errors import QueryError
from sumlens.board.state import SharedState, open_state
from sumlens.board.state.audit import MAX_FIELD_CHARS, MAX_PAGE, AuditEntry
from sumlens.board.state.runs import TrashEntry
from sumlens.board.state.views import MAX_HASH_CHARS, MAX_NAME_CHARS, MAX_VIEWS, ViewLimit


@pytest.fixture
def state(tmp_path: Path, state_url: str | None) -> Iterator[SharedState]:
    with open_state(tmp_path, "/logs", state_url, replica="here") as opened:
        yield opened


def test_views_are_kept_per_user(state: SharedState) -> None:
    state.views.put("ann", "loss", "#/scalars?run=./a")
    state.views.put("ann", "acc", "#/scalars?tag=acc")
    state.views.put(None, "mine", "#/")
    assert state.views.list("ann") == {"acc": "#/scalars?tag=acc", "loss": "#/scalars?run=./a"}
    assert state.views.list(None) == {"mine": "#/"} == state.views.list("")
    assert state.views.list("bob") == {}
    version = state.version
    state.views.put("ann", "loss", "#/images")  # replaced
    assert state.views.list("ann")["loss"] == "#/images"
    assert state.version == version  # views are not cached: the run list stays
    assert state.views.delete("ann", "loss") is True
    assert state.views.delete("ann", "loss") is False
    assert list(state.views.list("ann")) == ["acc"]


@pytest.mark.parametrize(
    ("name", "given", "named"),
    [
        ("", "#/", "name=''"),
        ("   ", "#/", "name='   '"),
        ("n" * (MAX_NAME_CHARS + 1), "#/", f"1 to {MAX_NAME_CHARS} characters"),
        ("a\nb", "#/", "name='a\\nb'"),
        ("ok", "/scalars", "hash='/scalars'"),
        ("ok", "#" + "x" * MAX_HASH_CHARS, f"at most {MAX_HASH_CHARS:,} characters"),
        ("ok", 7, "hash=7"),
    ],
)
def test_a_bad_view_is_named(state: SharedState, name: str, given: object, named: str) -> None:
    with pytest.raises(QueryError) as caught:
        state.views.put("ann", name, given)  # type: ignore[arg-type]
    assert named in str(caught.value)
    assert state.views.list("ann") == {}


def test_a_user_keeps_at_most_the_bound_of_views(state: SharedState) -> None:
    for i in range(MAX_VIEWS):
        state.views.put("ann", f"v{i:03d}", "#/")
    with pytest.raises(ViewLimit, match=f"at most {MAX_VIEWS} \\(MAX_VIEWS\\)") as caught:
        state.views.put("ann", "one more", "#/")
    assert caught.value.status == 413
    state.views.put("ann", "v000", "#/images")  # replacing one is taken at the bound
    state.views.put("bob", "his", "#/")  # the bound is each user's
    assert len(state.views.list("ann")) == MAX_VIEWS


def test_the_audit_log_pages_newest_first(state: SharedState) -> None:
    entries = [
        AuditEntry(1000.0 + i, "ann", "editor", "annotation.set", f"./r{i}", "", "here")
        for i in range(5)
    ]
    ids = [state.audit.record(entry) for entry in entries]
    assert ids == sorted(ids) and len(set(ids)) == 5
    first, following = state.audit.page(2)
    assert [entry.target for _, entry in first] == ["./r4", "./r3"]
    assert following == first[-1][0]
    second, following = state.audit.page(2, following)
    assert [entry.target for _, entry in second] == ["./r2", "./r1"]
    last, following = state.audit.page(2, following)
    assert [entry.target for _, entry in last] == ["./r0"] and following is None
    entry = first[0][1]
    assert entry.as_json() == {
        "at": 1004.0, "user": "ann", "role": "editor", "action": "annotation.set",
        "target": "./r4", "detail": "", "replica": "here",
    }  # fmt: skip


def test_an_audit_entry_is_cut_not_refused(state: SharedState) -> None:
    long = "x" * (MAX_FIELD_CHARS * 2)
    state.audit.record(AuditEntry(1.0, None, None, "run.delete", long, long, "here"))
    ((_, entry),), _ = state.audit.page(1)
    assert len(entry.target) == MAX_FIELD_CHARS and entry.target.endswith("[...]")
    assert entry.user is None and entry.role is None


@pytest.mark.parametrize(
    ("limit", "before", "named"),
    [
        (0, None, "limit=0"),
        (MAX_PAGE + 1, None, f"limit={MAX_PAGE + 1}"),
        (10, 0, "before=0"),
        (10, "3", "before='3'"),
    ],
)
def test_a_bad_audit_page_is_named(
    state: SharedState, limit: int, before: object, named: str
) -> None:
    with pytest.raises(QueryError, match=named):
        state.audit.page(limit, before)  # type: ignore[arg-type]


def test_run_states_follow_the_run(tmp_path: Path, state_url: str | None) -> None:
    with open_state(tmp_path, "/logs", state_url) as parent:
        assert parent.runs.set("./exp/r1", "hidden") == "hidden"
        parent.runs.set("./exp/r2", "archived")
        version = parent.version
        parent.runs.set("./exp/r2", None)  # shown again
        assert parent.version > version
        assert parent.runs.states() == {"./exp/r1": "hidden"}
    with open_state(tmp_path, "/logs/exp", state_url) as child:
        assert child.runs.states() == {"./r1": "hidden"}
    with open_state(tmp_path, "/logs/other", state_url) as sibling:
        assert sibling.runs.states() == {}


@pytest.mark.parametrize(
    ("run", "value", "named"),
    [
        ("./a", "deleted", "state='deleted'"),
        ("./a", True, "state=True"),
        ("a", "hidden", "run='a'"),
        ("./a/../b", "hidden", "run='./a/../b'"),
    ],
)
def test_a_bad_run_state_is_named(state: SharedState, run: str, value: object, named: str) -> None:
    with pytest.raises(QueryError, match=named.replace(".", r"\.").replace("?", r"\?")):
        state.runs.set(run, value)  # type: ignore[arg-type]
    assert state.runs.states() == {}


def test_the_trash_records_entries_of_this_base_directory(
    tmp_path: Path, state_url: str | None
) -> None:
    entry = TrashEntry("e1", "./exp/r1", "/logs/exp/r1", "/logs/.sumlens-trash/e1/exp/r1",
                       100.0, "ann")  # fmt: skip
    with open_state(tmp_path, "/logs", state_url) as state:
        state.runs.add_trash(entry)
        state.runs.add_trash(TrashEntry("e2", "./r2", "/logs/r2", "/t/e2/r2", 50.0, None))
        assert [each.id for each in state.runs.trashed()] == ["e2", "e1"]  # oldest first
        with pytest.raises(QueryError, match=r"entry\.id='e1' is not allowed: the trash holds"):
            state.runs.add_trash(entry)
        with pytest.raises(QueryError, match=r"entry\.id='a b'"):
            state.runs.add_trash(TrashEntry("a b", "./r", "/logs/r", "/t", 1.0, None))
        with pytest.raises(QueryError, match=r"entry\.run_id='r'"):
            state.runs.add_trash(TrashEntry("e3", "r", "/logs/r", "/t", 1.0, None))
    with open_state(tmp_path, "/logs/exp", state_url) as child:
        (seen,) = child.runs.trashed()
        assert (seen.id, seen.run_id, seen.by) == ("e1", "./r1", "ann")
        assert seen.as_json()["trash_location"] == entry.trash_location
        child.runs.states()  # the counter as stored now
        version = child.version
        assert child.runs.remove_trash("e1") is True
        assert child.runs.remove_trash("e1") is False  # the other replica's restore: told
        assert child.version == version + 1
        with pytest.raises(QueryError, match=r"id='\.\./x'"):
            child.runs.remove_trash("../x")
        assert child.runs.trashed() == []
