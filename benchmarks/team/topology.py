"""The topology of ``docs/team.md``, started for the team benchmark.

moto's S3 server holds the bucket of runs (written once by ``SummaryRecord`` through
:mod:`benchmarks.scale_workloads`, uploaded untimed), one PostgreSQL cluster holds the
shared state (:mod:`benchmarks.team.postgres`), two ``sumlens serve`` replicas run with the
environment of ``deploy/sumlens.env`` (only ports, paths, the bucket's endpoint and the
database changed), and two nginx instances with ``deploy/nginx/sumlens.conf`` sit in front:
one over both replicas, one whose two upstream lines both name replica ``a`` (the same load
against one replica, for the ratio).

Every client has a bearer token of its own (``SUMLENS_AUTH=token``, the file's mode), every
token the role ``editor``; the benchmark itself holds an ``admin`` token for its checks.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from benchmarks import scale_workloads
from benchmarks.harness.clock import now
from benchmarks.harness.http import connect
from benchmarks.harness.paths import REPO_ROOT
from benchmarks.harness.servers import Process, Processes, wait_answering
from benchmarks.remote.store import Store, upload
from benchmarks.scale_workloads import Workload
from benchmarks.team.nginx import PREFIX, Nginx, start_nginx
from benchmarks.team.postgres import Cluster, start_cluster

BUCKET = "team-runs"
BASE_URL = f"s3://{BUCKET}/runs"
ENV_FILE = REPO_ROOT / "deploy" / "sumlens.env"
CHECKER = "bench"
"""The benchmark's own token name (role admin): readiness checks, never load."""
LOAD_TIMEOUT_S = 600.0
"""Seconds a replica gets to list and load every run of the bucket."""
MOTO_TIMEOUT_S = 60.0


def read_env_file(path: Path = ENV_FILE) -> dict[str, str]:
    """The ``KEY=VALUE`` lines of an environment file (systemd's and docker's format:
    blank lines and ``#`` comments skipped, no quoting)."""
    values = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        key, sep, value = text.partition("=")
        if not sep:
            raise ValueError(f"{path}:{number}: {text!r} is not KEY=VALUE")
        values[key.strip()] = value.strip()
    return values


def client_name(index: int) -> str:
    """The token name (and audit user) of load client ``index``."""
    return f"client{index:03d}"


@dataclass
class Replica:
    """One ``sumlens serve`` process: its name, port, environment and current process."""

    name: str
    port: int
    env: dict[str, str]
    process: Process | None = None

    @property
    def address(self) -> str:
        """``127.0.0.1:port``, as nginx's upstream names it."""
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The replica's own base address (under the path prefix), bypassing nginx."""
        return f"http://{self.address}{PREFIX}"


@dataclass
class Team:
    """The running topology and the tokens of its clients."""

    processes: Processes
    workload: Workload
    cluster: Cluster
    replicas: dict[str, Replica]
    tokens: dict[str, str]
    started: list[Process]
    """Every process of the topology in the order it started (ended in reverse)."""
    two: Nginx | None = None
    one: Nginx | None = None
    base_dir: str = ""
    run_ids: list[str] = field(default_factory=list)

    def headers(self, name: str = CHECKER) -> dict[str, str]:
        """The ``Authorization`` header of token ``name``."""
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    def start(self, name: str) -> None:
        """(Re)start replica ``name`` on its port; returns once it listens."""
        replica = self.replicas[name]
        replica.process = self.processes.start(
            f"replica-{name}", [sys.executable, "-m", "sumlens", "serve"], replica.env
        )
        self.started.append(replica.process)
        wait_answering(f"{replica.url}/api/v1/health", replica.process, LOAD_TIMEOUT_S)

    def kill(self, name: str) -> None:
        """SIGKILL replica ``name`` and whatever it started: a crash, nothing drained."""
        replica = self.replicas[name]
        assert replica.process is not None, f"replica {name} was never started"
        with contextlib.suppress(ProcessLookupError):
            os.killpg(replica.process.pid, signal.SIGKILL)
        replica.process.wait()
        self.processes.end(replica.process)

    def loaded(self, name: str) -> bool:
        """Whether replica ``name`` is ready and lists every run ``ready`` with every point
        (asked of the replica itself)."""
        replica = self.replicas[name]
        points = self.workload.tags * self.workload.steps
        with connect(replica.url, timeout=30) as http:
            try:
                if http.get("/api/v1/ready").status_code != 200:
                    return False
                answer = http.get("/api/v1/runs", headers=self.headers())
            except httpx.TransportError:
                return False
        if answer.status_code != 200:
            return False
        runs = answer.json()["runs"]
        return len(runs) == self.workload.runs and all(
            run["status"] == "ready" and run["points"] == points for run in runs
        )

    def wait_loaded(self, name: str) -> float:
        """Wait (bounded) until replica ``name`` has loaded the whole bucket; the seconds."""
        process = self.replicas[name].process
        assert process is not None, f"replica {name} was never started"
        started = now()
        waiter = self.processes.waiter(process, f"replica {name}", started, LOAD_TIMEOUT_S)
        while not self.loaded(name):
            waiter.pause(0.2)
        return now() - started


def write_access_files(root: Path, clients: int) -> tuple[Path, Path, dict[str, str]]:
    """The token file (one token per client and the benchmark's own) and the roles file
    (every client an editor, the benchmark an admin); their paths and the tokens."""
    tokens = {client_name(i): secrets.token_hex(16) for i in range(clients)}
    tokens[CHECKER] = secrets.token_hex(16)
    token_file = root / "tokens"
    token_file.write_text("".join(f"{name}:{token}\n" for name, token in tokens.items()))
    token_file.chmod(0o600)
    roles = root / "roles.toml"
    roles.write_text(f'default = "editor"\n[tokens]\n{CHECKER} = "admin"\n')
    return token_file, roles, tokens


def replica_env(
    store: Store, cluster: Cluster, root: Path, name: str, port: int, files: tuple[Path, Path]
) -> dict[str, str]:
    """The environment of replica ``name``: this process's (no ``SUMLENS_*`` of its own, the
    bucket's credentials) with ``deploy/sumlens.env`` over it, changed where the
    benchmark's ports and paths differ."""
    base = {key: value for key, value in store.env().items() if not key.startswith("SUMLENS_")}
    documented = read_env_file()
    changes = {
        "SUMLENS_LOGDIR": BASE_URL,
        "SUMLENS_STORAGE_OPTION": f"endpoint_url={store.direct}",
        "SUMLENS_STATE": cluster.url,
        "SUMLENS_HOST": "127.0.0.1",
        "SUMLENS_PORT": str(port),
        "SUMLENS_ALLOWED_HOSTS": "localhost",
        "SUMLENS_WORKSPACE": str(root / f"workspace-{name}"),
        "SUMLENS_TOKEN_FILE": str(files[0]),
        "SUMLENS_ROLES_FILE": str(files[1]),
        "SUMLENS_TRUSTED_PROXIES": "127.0.0.1",
    }
    unknown = sorted(set(changes) - set(documented))
    if unknown:
        raise KeyError(f"{ENV_FILE.name} does not document {unknown}")
    return {**base, **documented, **changes, "SUMLENS_REPLICA_NAME": name}


def start_moto(processes: Processes, started: list[Process]) -> Store:
    """moto's S3 server on 127.0.0.1 (no latency proxy: the store is not what is measured;
    the :class:`Store` names moto itself at all three of its addresses)."""
    port = processes.port()
    moto = str(Path(sys.executable).with_name("moto_server"))
    proc = processes.start("moto", [moto, "-H", "127.0.0.1", "-p", str(port)])
    started.append(proc)
    url = f"http://127.0.0.1:{port}"
    wait_answering(f"{url}/moto-api/", proc, MOTO_TIMEOUT_S)
    return Store(url, url, url)


@contextlib.contextmanager
def running_team(workload: Workload, clients: int) -> Iterator[Team]:
    """The whole topology over ``workload`` with tokens for ``clients`` clients, every
    replica loaded; everything ended (in reverse order) on leaving."""
    root = Path(tempfile.mkdtemp(prefix="bench-team-"))
    root.chmod(0o711)  # PostgreSQL's user (not us when root) must reach its folder inside
    processes = Processes("bench-team-logs-")
    started: list[Process] = []
    try:
        data = scale_workloads.ensure(workload)
        store = start_moto(processes, started)
        objects, size = upload(store, data, BASE_URL)
        print(f"uploaded {objects} objects, {size / 1e6:.1f} MB to moto", flush=True)
        cluster = start_cluster(processes, root / "postgres")
        started.append(cluster.process)
        token_file, roles, tokens = write_access_files(root, clients)
        replicas = {}
        for name in ("a", "b"):
            port = processes.port()
            env = replica_env(store, cluster, root, name, port, (token_file, roles))
            replicas[name] = Replica(name, port, env)
        team = Team(processes, workload, cluster, replicas, tokens, started)
        for name in replicas:
            team.start(name)
        for name in replicas:
            took = team.wait_loaded(name)
            print(f"replica {name} loaded the bucket in {took:.1f} s", flush=True)
        a, b = replicas["a"].address, replicas["b"].address
        team.two = start_nginx(processes, root / "nginx-two", (a, b))
        team.one = start_nginx(processes, root / "nginx-one", (a, a))
        started += [team.two.process, team.one.process]
        with connect(replicas["a"].url, timeout=30) as http:
            team.base_dir = http.get("/api/v1/health").json()["base_dir"]
            runs = http.get("/api/v1/runs", headers=team.headers()).json()["runs"]
        team.run_ids = sorted(run["id"] for run in runs)
        yield team
    except BaseException:
        for name, log in sorted(logs_of(processes).items()):
            print(f"--- {name} (end of its log) ---\n{log}", file=sys.stderr)
        raise
    finally:
        stop_all(processes, started)
        shutil.rmtree(root, ignore_errors=True)


def logs_of(processes: Processes) -> dict[str, str]:
    """The end of every log file the run's processes wrote, by file name."""
    return {
        log.name: "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        for log in processes.log_dir.glob("*.log")
    }


def stop_all(processes: Processes, started: list[Process]) -> None:
    """End the ``started`` processes in the reverse of their start (nginx, replicas,
    PostgreSQL, moto), so the database's smart shutdown finds no client left; then
    whatever else ``processes`` holds."""
    for proc in reversed(started):
        processes.end(proc, group=True)
    processes.close()
