"""The ``--state`` URL's password never leaks (``board/state_url.py``, ``state/postgres.py``):
a password with ``%``, a space, ``@``, ``:``, ``/`` or in a ``password=`` parameter is taken
or refused without being shown; a server whose database is down (a wrong port, a wrong
password, a refusal that quotes the password) answers 503 without it, and ``sumlens
serve``/``start`` keep it out of stderr and the log; a socket-folder URL connects."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import psycopg
import pytest
from helpers.board import free_port, get_json, running_server, wait_until, write_run
from helpers.postgres import PASSWORD, USER, Cluster

from sumlens.board.settings import BoardSettings, BoardSettingsError, state_for_display
from sumlens.board.state import open_state
from sumlens.board.state.annotation_checks import Annotation
from sumlens.board.state.backend import StateSetupError, StateUnavailable
from sumlens.board.state_url import parse_state_url

LEFT, RIGHT = "Zq7xLeft", "Wk9vRight"
"""The two halves of every test password: neither may show anywhere."""
BOUND = 60.0
"""Seconds a server may take to start, answer or stop (a bound, not a budget)."""
SECRET = f"{LEFT}@{RIGHT}"
"""A password that must be percent-encoded in a URL (``%40``)."""


def _hidden(text: str) -> bool:
    """Whether ``text`` holds no part of a test password."""
    return LEFT not in text and RIGHT not in text


def _netloc(password: str) -> str:
    return f"postgresql://team:{password}@db.lan:5433/sumlens"


def _param(password: str) -> str:
    return f"postgresql:///sumlens?host=/var/run/postgresql&password={password}"


CASES = [
    pytest.param(_netloc(f"{LEFT}%4{RIGHT}"), False, id="netloc-bad-percent"),
    pytest.param(_netloc(f"{LEFT}%{RIGHT}"), False, id="netloc-lone-percent"),
    pytest.param(_netloc(f"{LEFT} {RIGHT}"), False, id="netloc-space"),
    pytest.param(_netloc(f"{LEFT}@{RIGHT}"), False, id="netloc-at"),
    pytest.param(_netloc(f"{LEFT}/{RIGHT}"), False, id="netloc-slash"),
    pytest.param(_netloc(f"{LEFT}%00{RIGHT}"), False, id="netloc-nul"),
    pytest.param(_netloc(f"{LEFT}:{RIGHT}"), True, id="netloc-colon"),
    pytest.param(_netloc(f"{LEFT}?{RIGHT}"), True, id="netloc-question-mark"),
    pytest.param(_netloc(quote(f"{LEFT}@/% :{RIGHT}", safe="")), True, id="netloc-encoded"),
    pytest.param(_param(f"{LEFT}%40{RIGHT}"), True, id="param-encoded"),
    pytest.param(_param(f"{LEFT}%4{RIGHT}"), False, id="param-bad-percent"),
    pytest.param(_param(f"{LEFT} {RIGHT}"), False, id="param-space"),
    pytest.param(_param(f"{LEFT}@{RIGHT}"), False, id="param-at"),
    pytest.param(_param(f"{LEFT}&{RIGHT}"), False, id="param-ampersand"),
    pytest.param(_param(f"{LEFT}={RIGHT}"), False, id="param-equals"),
    pytest.param(_netloc("pw") + f"?sslpassword={LEFT}%2F{RIGHT}", True, id="sslpassword"),
    pytest.param(f"mysql://root:{LEFT}@{RIGHT}@db/team", False, id="not-postgresql"),
    pytest.param(f"host=db password='{LEFT} {RIGHT}'", False, id="keyword-form"),
]


@pytest.mark.parametrize(("url", "taken"), CASES)
def test_a_password_is_taken_or_refused_without_showing_it(
    tmp_path: Path, url: str, taken: bool
) -> None:
    shown = state_for_display(url)
    assert _hidden(shown) and "***" in shown
    if taken:
        assert BoardSettings.create(tmp_path, state=url).state == url
        assert _hidden(parse_state_url(url).describe())
        return
    with pytest.raises(BoardSettingsError) as refused:
        BoardSettings.create(tmp_path, state=url)
    said = str(refused.value)
    assert said.startswith(f"--state {shown!r} is not allowed: ") and _hidden(said)
    with pytest.raises(StateSetupError) as refused_too:
        open_state(tmp_path, "/logs", url)
    assert str(refused_too.value) == said


def test_the_masked_url_keeps_the_rest_as_written() -> None:
    assert (
        state_for_display("postgresql:///db?host=/var/run/postgresql&password=s3cr3t")
        == "postgresql:///db?host=/var/run/postgresql&password=***"
    )
    assert (
        state_for_display("postgres://a%20b:p%40ss@%2Ftmp%2Fpg:5433/d%20b?sslmode=require")
        == "postgres://a%20b:***@%2Ftmp%2Fpg:5433/d%20b?sslmode=require"
    )
    assert state_for_display("postgresql://u:a/b@c@h/db?x=1") == "postgresql://u:***@h/db?x=1"
    assert state_for_display("postgresql://db.lan/team") == "postgresql://db.lan/team"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("postgresql:///team", "names no host"),
        ("postgresql://db.lan:99999/team", "a port is not a number from 1 to 65535"),
        ("postgresql://db.lan/team?colour=red", "libpq"),
        ("postgresql://u:pw@db.lan/team?user=me@corp", "'@'"),
        ("POSTGRESQL://db.lan/team", "starts with postgresql://"),
    ],
)
def test_a_url_libpq_or_sumlens_does_not_take_says_why(tmp_path: Path, url: str, why: str) -> None:
    with pytest.raises(BoardSettingsError, match="--state") as refused:
        BoardSettings.create(tmp_path, state=url)
    assert why in str(refused.value)


def test_scrub_takes_out_every_form_of_every_password() -> None:
    url = f"postgresql://u:{quote(SECRET, safe='')}@h/db?sslpassword=A%2Bb-ssl-secret"
    parsed = parse_state_url(url)
    text = f"x {SECRET} y {quote(SECRET, safe='')} z A+b-ssl-secret A%2Bb-ssl-secret"
    assert parsed.scrub(text) == "x *** y *** z *** ***"
    assert _hidden(repr(parsed)) and "ssl-secret" not in repr(parsed)


def _down_urls(cluster: Cluster) -> dict[str, str]:
    """Valid URLs of a state database that does not answer, each with the test password:
    nothing listens at the port; the password is wrong; the user does not exist and is
    named as the password is, so PostgreSQL's refusal quotes the password."""
    encoded = quote(SECRET, safe="")
    database = cluster.database().rsplit("/", 1)[1]
    return {
        "wrong-port": f"postgresql://{USER}:{encoded}@127.0.0.1:{free_port()}/{database}",
        "wrong-password": f"postgresql://{USER}:{encoded}@127.0.0.1:{cluster.port}/{database}",
        "quoted": f"postgresql://{encoded}:{encoded}@127.0.0.1:{cluster.port}/{database}",
    }


@pytest.mark.parametrize("kind", ["wrong-port", "wrong-password", "quoted"])
def test_a_server_whose_database_is_down_answers_503_without_the_password(
    tmp_path: Path, postgres_cluster: Cluster, kind: str
) -> None:
    url = _down_urls(postgres_cluster)[kind]
    with open_state(tmp_path, "/logs", url) as state, pytest.raises(StateUnavailable) as caught:
        state.views.list(None)
    assert "unreachable" in str(caught.value) and _hidden(str(caught.value))
    if kind == "quoted":
        assert 'for user "***"' in str(caught.value)  # the driver's text, scrubbed

    base = tmp_path / "runs"
    write_run(base / "a", range(1, 4))
    settings = BoardSettings.create(base, port=free_port(), workspace=tmp_path / "ws", state=url)
    with running_server(settings) as server, httpx.Client(timeout=BOUND) as client:
        answers = [
            client.get(f"{server}/api/v1/views"),
            client.put(f"{server}/api/v1/views", params={"name": "v"}, json={"hash": "#/"}),
            client.get(f"{server}/api/v1/audit"),
            client.get(f"{server}/api/v1/ready"),
        ]
    for answer in answers:
        assert answer.status_code == 503, answer.text
        assert _hidden(answer.text)
    assert "unreachable" in answers[0].json()["detail"]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of one command: its own HOME, no SUMLENS_ variable from outside."""
    (tmp_path / "home").mkdir()
    clean = {key: value for key, value in os.environ.items() if not key.startswith("SUMLENS_")}
    return {**clean, "HOME": str(tmp_path / "home")}


@pytest.fixture
def served(tmp_path: Path, env: dict[str, str], postgres_cluster: Cluster) -> Iterator[str]:
    """``sumlens serve`` in the foreground with a URL whose refusal quotes the password;
    yields its address; stops it and leaves its stdout and stderr in ``serve.out``."""
    base = tmp_path / "runs"
    write_run(base / "a", range(1, 4))
    port = free_port()
    url = _down_urls(postgres_cluster)["quoted"]
    command = [sys.executable, "-m", "sumlens", "serve", f"--logdir={base}", f"--port={port}"]
    command += [f"--workspace={tmp_path / 'ws'}", "--state", url]
    with (tmp_path / "serve.out").open("w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            wait_until(lambda: get_json(f"http://127.0.0.1:{port}/api/v1/health"), BOUND)
            yield f"http://127.0.0.1:{port}"
        finally:
            server.terminate()
            server.wait(BOUND)


def test_sumlens_serve_keeps_the_password_out_of_its_stderr(served: str, tmp_path: Path) -> None:
    answer = httpx.get(f"{served}/api/v1/views", timeout=BOUND)
    assert answer.status_code == 503 and _hidden(answer.text)
    assert 'for user "***"' in answer.json()["detail"]
    output = tmp_path / "serve.out"
    wait_until(lambda: 'for user "***"' in output.read_text(), BOUND)  # the watcher's warning
    assert _hidden(output.read_text())


def test_sumlens_start_keeps_the_password_out_of_its_log(
    tmp_path: Path, env: dict[str, str], postgres_cluster: Cluster
) -> None:
    base = tmp_path / "runs"
    write_run(base / "a", range(1, 4))
    port, workspace = free_port(), tmp_path / "ws"
    team = {
        "SUMLENS_LOGDIR": str(base),
        "SUMLENS_STATE": _down_urls(postgres_cluster)["quoted"],
    }

    def sumlens(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "sumlens",
                command,
                f"--port={port}",
                f"--workspace={workspace}",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=BOUND,
        )

    started = sumlens("start", {**env, **team})
    assert started.returncode == 0, started.stderr
    log = workspace / f"sumlens-{port}.log"
    try:
        answer = httpx.get(f"http://127.0.0.1:{port}/api/v1/views", timeout=BOUND)
        assert answer.status_code == 503 and _hidden(answer.text)
        wait_until(lambda: 'for user "***"' in log.read_text(), BOUND)  # the watcher's warning
    finally:
        stopped = sumlens("stop", env)
        assert stopped.returncode == 0, stopped.stderr
    assert _hidden(started.stdout + started.stderr + log.read_text())


@pytest.mark.parametrize("form", ["netloc", "parameter"])
def test_a_socket_folder_url_connects(tmp_path: Path, postgres_cluster: Cluster, form: str) -> None:
    database = postgres_cluster.database().rsplit("/", 1)[1]
    folder, port = postgres_cluster.folder, postgres_cluster.port
    if form == "netloc":
        url = f"postgresql://{USER}:{PASSWORD}@/{database}?host={folder}&port={port}"
    else:
        url = f"postgres:///{database}?host={folder}&port={port}&user={USER}&password={PASSWORD}"
    assert BoardSettings.create(tmp_path, state=url).state == url
    assert PASSWORD not in state_for_display(url)
    with open_state(tmp_path, "/logs", url) as state:
        assert state.describe() == f"postgresql {folder}:{port}/{database}"
        state.annotations.put("./a", Annotation(("over the socket",)))
        assert state.annotations.get("./a") == Annotation(("over the socket",))
    with psycopg.connect(url) as db:
        (peer,) = db.execute("SELECT inet_client_addr()").fetchone() or (0,)
    assert peer is None  # the URL goes through the socket: it has no client address
