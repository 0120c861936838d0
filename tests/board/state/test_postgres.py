"""The PostgreSQL backend (``board/state/postgres.py``) when things go wrong: the database
away is a 503 naming it (never its password), a broken connection is opened again and the
transaction run again, a transaction that fails on a live connection is a 503 too, a replica
whose listening connection broke catches up, and a setup that cannot work says how to fix
it. What the URL's password must never reach is tested in ``test_state_secrets.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import psycopg
import pytest
from helpers.board import free_port, route_client, wait_until
from helpers.memory_surface import MemorySurface
from helpers.postgres import PASSWORD, Cluster

from sumlens.board.settings import BoardSettings
from sumlens.board.state import open_state
from sumlens.board.state.annotation_checks import Annotation
from sumlens.board.state.backend import StateSetupError, StateUnavailable
from sumlens.board.state.postgres import PostgresBackend, describe_url


def _terminate_others(url: str) -> int:
    """End every other connection to ``url``'s database (as a restart or a cut would)."""
    with psycopg.connect(url, autocommit=True) as db:
        (ended,) = db.execute(
            "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    return int(ended)


def test_the_database_away_is_a_503_naming_it_without_its_password(tmp_path: Path) -> None:
    url = f"postgresql://sumlens:{PASSWORD}@127.0.0.1:{free_port()}/team"
    with open_state(tmp_path, "/logs", url) as state:
        assert state.describe() == describe_url(url) == f"postgresql {url.split('@')[1]}"
        assert not state.ready()
        with pytest.raises(StateUnavailable) as caught:
            state.annotations.put("./a", Annotation(("x",)))
        assert caught.value.status == 503
        said = str(caught.value)
        assert "is unreachable" in said and url.split("@")[1] in said
        assert PASSWORD not in said

    surface = MemorySurface("/logs")
    surface.add_scalars("./a", "loss", [1], [1.0])
    settings = BoardSettings(base_dir=Path("/logs"), workspace=tmp_path, state=url)
    with route_client(surface, settings) as client:
        body = {"tags": ["x"], "note": "", "colour": None}
        answer = client.put("/api/v1/annotation", params={"run": "./a"}, json=body)
        assert answer.status_code == 503, answer.text
        assert "unreachable" in answer.json()["detail"] and PASSWORD not in answer.text


def test_a_broken_connection_is_opened_again(tmp_path: Path, postgres_database: str) -> None:
    with open_state(tmp_path, "/logs", postgres_database) as state:
        state.annotations.put("./a", Annotation(("before",)))
        assert _terminate_others(postgres_database) >= 1
        state.views.put(None, "v", "#/")  # a write on the broken connection: run again
        assert state.views.list(None) == {"v": "#/"}
        assert _terminate_others(postgres_database) >= 1
        assert state.audit.page(1) == ([], None)  # a read: run again
        assert state.ready()


def test_a_transaction_failing_on_a_live_connection_is_a_503(postgres_database: str) -> None:
    url = postgres_database + "?options=-c%20lock_timeout%3D100"  # 100 ms for a lock
    backend = PostgresBackend(url)
    count = "SELECT COUNT(*) FROM schema_version"
    try:
        assert backend.ready()  # connected, the schema migrated
        with psycopg.connect(postgres_database) as holder, holder.transaction():
            holder.execute("LOCK TABLE schema_version IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(StateUnavailable, match="did not complete a transaction") as caught:
                backend.read(lambda tx: tx.one(count))
        assert caught.value.status == 503 and PASSWORD not in str(caught.value)
        assert backend.read(lambda tx: tx.one(count)) is not None  # the same connection answers
    finally:
        backend.close()


def test_a_replica_whose_listener_broke_catches_up(tmp_path: Path, postgres_database: str) -> None:
    with (
        open_state(tmp_path, "/logs", postgres_database) as first,
        open_state(tmp_path, "/logs", postgres_database) as second,
    ):
        second.start()
        assert second.annotations.all() == {}
        wait_until(lambda: _listening(postgres_database), timeout=10)
        _terminate_others(postgres_database)
        first.annotations.put("./a", Annotation(("after the cut",)))
        wait_until(lambda: "./a" in second.annotations.all(), timeout=10)


def _listening(url: str) -> bool:
    """Whether a connection of ``url``'s database listens (the watcher's)."""
    with psycopg.connect(url, autocommit=True) as db:
        (count,) = db.execute(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND query LIKE 'LISTEN %'"
        ).fetchone()
    return int(count) > 0


def test_a_url_that_is_not_postgresqls_is_refused_without_its_password(tmp_path: Path) -> None:
    with pytest.raises(StateSetupError) as caught:
        open_state(tmp_path, "/logs", f"mysql://root:{PASSWORD}@db/team")
    assert "postgresql://" in str(caught.value) and PASSWORD not in str(caught.value)


def test_without_psycopg_the_error_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_cluster: Cluster
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as when it is not installed
    with pytest.raises(StateSetupError, match=r"pip install 'sumlens\[postgres\]'"):
        open_state(tmp_path, "/logs", postgres_cluster.url())
