"""A throwaway PostgreSQL cluster for the tests: ``initdb`` and ``pg_ctl`` in a temporary
folder, listening on 127.0.0.1 at a free port, stopped and removed afterwards.

PostgreSQL refuses to run as root, and CI runs as root: then the cluster's folder is given
to the ``postgres`` user and the programs run through ``runuser -u postgres --``. The
programs are found on PATH or under ``/usr/lib/postgresql/*/bin`` (Debian's place); when
there are none, :func:`find_bin` fails naming ``apt-get install postgresql`` (``.ci/run``
installs it). The cluster trades durability for speed (``fsync=off``): it lives for one
test session. :meth:`Cluster.database` makes a fresh database (from ``template0``) and
gives its URL.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers.board import free_port

USER = "sumlens"
PASSWORD = "sumlens-test-password"
"""The superuser the cluster is made with (a password, so URLs carry one as real ones do)."""
PROGRAMS = ("initdb", "pg_ctl")


def find_bin() -> Path:
    """The folder of PostgreSQL's server programs."""
    found = shutil.which("initdb")
    if found is not None and shutil.which("pg_ctl") is not None:
        return Path(found).resolve().parent
    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if all((folder / name).is_file() for name in PROGRAMS):
            return folder
    raise RuntimeError(
        "PostgreSQL's server programs (initdb, pg_ctl) are not installed, and the shared "
        "state's tests need them: apt-get install postgresql"
    )


class Cluster:
    """A PostgreSQL cluster in ``folder`` on 127.0.0.1:``port``."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.port = port
        self._bin = find_bin()
        self._as_postgres = os.geteuid() == 0

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "postgres") -> str:
        """The URL of ``database`` in this cluster (with the superuser's password)."""
        return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        """Make the cluster and start it; returns once it accepts connections."""
        password_file = self.folder / "password"
        password_file.write_text(PASSWORD + "\n")
        if self._as_postgres:
            account = pwd.getpwnam("postgres")
            for path in (self.folder, password_file):
                os.chown(path, account.pw_uid, account.pw_gid)
        self._run(
            "initdb", "-D", str(self.data), "-U", USER, f"--pwfile={password_file}",
            "--auth=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8",
        )  # fmt: skip
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} "
            f"-c unix_socket_directories={self.folder} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run(
            "pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"),
            "-w", "-t", "60", "start",
        )  # fmt: skip

    def stop(self) -> None:
        """Stop the cluster at once (its folder is removed by the caller)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def database(self) -> str:
        """A new, empty database's URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name} TEMPLATE template0")
        return self.url(name)

    def _run(self, program: str, *args: str) -> None:
        command = [str(self._bin / program), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(
                f"{program} failed ({done.returncode}): {done.stderr.strip() or done.stdout}"
            )


@contextmanager
def postgres_cluster() -> Iterator[Cluster]:
    """A started :class:`Cluster` for the length of the block, stopped and removed after."""
    folder = Path(tempfile.mkdtemp(prefix="sumlens-pg-"))
    folder.chmod(0o755)
    cluster = Cluster(folder, free_port())
    try:
        cluster.start()
        yield cluster
    finally:
        if (cluster.data / "postmaster.pid").exists():
            cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
