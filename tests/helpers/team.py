"""The documented team topology for tests/deploy (its fixtures), started for real: moto's
S3 server holding the runs, PostgreSQL (the ``postgres_url`` fixture), two ``sumlens
serve`` replicas configured by ``deploy/sumlens.env``, nginx with ``deploy/nginx/`` in
front; and headless Chromium."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from helpers.nginx import Nginx, running_nginx
from helpers.replicas import Replica, replica_environment
from helpers.s3 import aws_environment, bucket_server, s3_options
from sumlens import SummaryRecord

BUCKET = "team-runs"
RUNS = ("./alpha", "./beta")
RELOAD_INTERVAL = "0.5"
EDITOR_TOKEN = secrets.token_hex(16)
VIEWER_TOKEN = secrets.token_hex(16)
SIGNED_IN = {"carol": ("carol@example.org", "ml-team"), "dave": ("dave@example.org", "guests")}
"""The users the stand-in for oauth2-proxy knows (a cookie names one): email, groups."""
SESSION_COOKIE = "_oauth2_proxy"


@dataclass
class Team:
    """The running topology: the two replicas, nginx in front, and a client through nginx
    holding an editor's token."""

    a: Replica
    b: Replica
    nginx: Nginx
    client: httpx.Client

    def direct(self, token: str = EDITOR_TOKEN) -> httpx.Client:
        """A client of the replicas themselves (no nginx), with ``token``."""
        return httpx.Client(headers=_bearer(token), timeout=30, trust_env=False)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server holding the bucket of the team's runs (two short runs)."""
    with bucket_server(BUCKET) as url:
        spool = tmp_path_factory.mktemp("spool")
        for run in RUNS:
            where = f"s3://{BUCKET}/runs/{run[2:]}"
            with SummaryRecord(where, storage_options=s3_options(url), spool_dir=spool) as record:
                for step in range(5):
                    record.add_value("scalar", "loss", 1.0 / (step + 1))
                    record.record(step)
        yield url


def _environment(endpoint: str, state: str, root: Path, auth: dict[str, str]) -> dict[str, str]:
    """The documented replica environment with the test's ports and paths."""
    tokens = root / "tokens"
    tokens.write_text(f"# the team's tokens\neditor:{EDITOR_TOKEN}\nviewer:{VIEWER_TOKEN}\n")
    roles = root / "roles.toml"
    roles.write_text('default = "editor"\n[tokens]\nviewer = "viewer"\n')
    return {
        **aws_environment(endpoint),
        **replica_environment(
            {
                "SUMLENS_LOGDIR": f"s3://{BUCKET}/runs",
                "SUMLENS_STORAGE_OPTION": f"endpoint_url={endpoint}",
                "SUMLENS_STATE": state,
                "SUMLENS_HOST": "127.0.0.1",
                "SUMLENS_ALLOWED_HOSTS": "localhost",
                "SUMLENS_TOKEN_FILE": str(tokens),
                "SUMLENS_ROLES_FILE": str(roles),
                "SUMLENS_TRUSTED_PROXIES": "127.0.0.1",
                "SUMLENS_RELOAD_INTERVAL": RELOAD_INTERVAL,
                **auth,
            }
        ),
    }


@contextmanager
def _team(
    root: Path, site: str, environment: dict[str, str], extra: dict[str, str]
) -> Iterator[Team]:
    """Replicas a and b with ``environment`` (each its own workspace: the column cache is
    a replica's own) behind nginx serving ``site``."""
    with ExitStack() as stack:
        replicas = []
        for name in ("a", "b"):
            env = {**environment, "SUMLENS_WORKSPACE": str(root / f"workspace-{name}")}
            replica = Replica(name, env, root / f"replica-{name}.log")
            stack.callback(replica.close)
            replica.start()
            replicas.append(replica)
        nginx = stack.enter_context(
            running_nginx(root / "nginx", site, [r.address for r in replicas], extra)
        )
        client = stack.enter_context(
            httpx.Client(
                base_url=nginx.url,
                verify=str(nginx.certificate),
                headers=_bearer(EDITOR_TOKEN),
                timeout=30,
                trust_env=False,
            )
        )
        yield Team(replicas[0], replicas[1], nginx, client)


@pytest.fixture(scope="module")
def team(
    endpoint: str, postgres_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Team]:
    """The topology of docs/team.md with ``deploy/nginx/sumlens.conf`` (token sign-in)."""
    root = tmp_path_factory.mktemp("team")
    environment = _environment(endpoint, postgres_url, root, {})
    with _team(root, "sumlens.conf", environment, {}) as running:
        yield running


class _AuthAnswers(BaseHTTPRequestHandler):
    """oauth2-proxy's ``/oauth2/auth`` as nginx asks it: 202 with ``X-Auth-Request-User``,
    ``-Email`` and ``-Groups`` for a request whose cookie names a signed-in user, else 401."""

    def do_GET(self) -> None:
        if self.path.split("?")[0] != "/oauth2/auth":
            self.send_response(404)
            self.end_headers()
            return
        cookie = SimpleCookie(self.headers.get("Cookie", ""))
        user = cookie[SESSION_COOKIE].value if SESSION_COOKIE in cookie else ""
        if user not in SIGNED_IN:
            self.send_response(401)
            self.end_headers()
            return
        email, groups = SIGNED_IN[user]
        self.send_response(202)
        self.send_header("X-Auth-Request-User", user)
        self.send_header("X-Auth-Request-Email", email)
        self.send_header("X-Auth-Request-Groups", groups)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def proxy_team(
    endpoint: str, postgres_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Team]:
    """The topology with ``deploy/nginx/auth_request.conf``: nginx asks a stand-in for
    oauth2-proxy (a real HTTP server on 127.0.0.1) about every request, and the replicas run
    with ``SUMLENS_AUTH=proxy``, believing nginx (127.0.0.1) alone."""
    root = tmp_path_factory.mktemp("proxy-team")
    roles = {"SUMLENS_AUTH": "proxy"}
    environment = _environment(endpoint, postgres_url, root, roles)
    del environment["SUMLENS_TOKEN_FILE"]  # the env file's token line is for --auth token
    (root / "roles.toml").write_text('default = "viewer"\n[groups]\nml-team = "editor"\n')
    service = ThreadingHTTPServer(("127.0.0.1", 0), _AuthAnswers)
    thread = threading.Thread(target=service.serve_forever, daemon=True)
    thread.start()
    extra = {"OAUTH2_PROXY": f"127.0.0.1:{service.server_address[1]}"}
    try:
        with _team(root, "auth_request.conf", environment, extra) as running:
            yield running
    finally:
        service.shutdown()
        service.server_close()
