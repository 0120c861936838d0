"""A throwaway PostgreSQL cluster for the team benchmark: ``initdb`` in a temporary folder,
then ``postgres`` in the foreground on 127.0.0.1 and a free port, started through the
harness (:class:`~benchmarks.harness.servers.Processes`) so that it ends with the run.

PostgreSQL refuses to run as root: when the benchmark is root, both commands run as the
``postgres`` user (``runuser -u postgres --``) and the folder is handed to that user. The
binaries come from ``PATH`` or Debian's ``/usr/lib/postgresql/<version>/bin``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from benchmarks.harness.clock import now
from benchmarks.harness.servers import Process, Processes

USER = "postgres"
"""The operating-system user (and the database superuser) the cluster runs as."""
DATABASE = "sumlens"
"""The database the replicas share."""
START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Cluster:
    """A running cluster: its process, its port and the URL of the shared database."""

    process: Process
    port: int

    @property
    def url(self) -> str:
        """``postgresql://`` URL of :data:`DATABASE` (trust authentication: no password)."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{DATABASE}"

    @property
    def admin_url(self) -> str:
        """The URL of the maintenance database ``postgres`` (to create :data:`DATABASE`)."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"


def binary(name: str) -> str:
    """The path of PostgreSQL's program ``name`` (``initdb``, ``postgres``)."""
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    if not versions:
        raise FileNotFoundError(
            f"{name} is not on PATH nor in /usr/lib/postgresql/*/bin: apt-get install postgresql"
        )
    return str(versions[-1])


def as_user(args: list[str]) -> list[str]:
    """``args`` run as :data:`USER` when this process is root (PostgreSQL refuses root)."""
    return ["runuser", "-u", USER, "--", *args] if os.geteuid() == 0 else args


def hand_over(folder: Path) -> None:
    """Give ``folder`` to :data:`USER` when this process is root (else it is ours already)."""
    if os.geteuid() == 0:
        entry = pwd.getpwnam(USER)
        os.chown(folder, entry.pw_uid, entry.pw_gid)


def start_cluster(processes: Processes, root: Path) -> Cluster:
    """A fresh cluster in ``root`` (an empty folder) with :data:`DATABASE` created in it;
    ended by ``processes`` (SIGTERM: PostgreSQL's smart shutdown)."""
    import psycopg

    data, sockets = root / "data", root / "sockets"
    for folder in (root, data, sockets):
        folder.mkdir(exist_ok=True)
        hand_over(folder)
    initdb = [binary("initdb"), "-D", str(data), "-U", USER, "-A", "trust", "-E", "UTF8"]
    done = subprocess.run(
        as_user([*initdb, "--no-sync"]), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"initdb failed ({done.returncode}): {done.stderr[-2000:]}")
    port = processes.port()
    server = [binary("postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(port)]
    server += ["-k", str(sockets), "-c", "max_connections=200"]
    proc = processes.start("postgres", as_user(server))
    cluster = Cluster(proc, port)
    waiter = processes.waiter(proc, "postgres", now(), START_TIMEOUT_S)
    while True:
        try:
            with psycopg.connect(cluster.admin_url, connect_timeout=2, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {DATABASE}")
            return cluster
        except psycopg.OperationalError:
            waiter.pause(0.1)
