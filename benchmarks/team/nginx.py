"""nginx in front of the benchmark's replicas, with the site file ``deploy/`` ships.

:func:`start_nginx` fills ``deploy/nginx/sumlens.conf`` and its snippets (the ``${NAME}``
placeholders the files document, nothing else: the replicas' addresses, the listen
addresses, the server name and a throwaway certificate), lays them out as ``/etc/nginx``
holds them (``conf.d/`` and ``snippets/`` beside a main ``nginx.conf``) and runs
``/usr/sbin/nginx`` in the foreground with its own prefix, logs and temporary folders. The
site is the TLS one a team deploys, so the load goes over HTTPS, as a browser's would.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from benchmarks.harness.paths import REPO_ROOT
from benchmarks.harness.servers import Process, Processes, wait_answering

NGINX = Path("/usr/sbin/nginx")
SITE_DIR = REPO_ROOT / "deploy" / "nginx"
SITE = "sumlens.conf"
"""The site of ``deploy/nginx/`` the benchmark runs (bearer tokens, TLS, two upstreams)."""
PREFIX = "/sumlens"
"""The path prefix the site serves the dashboard under."""
START_TIMEOUT_S = 30.0
_PLACEHOLDER = re.compile(r"\$\{([A-Z0-9_]+)\}")
_TEMP_DIRS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


@dataclass(frozen=True)
class Nginx:
    """A running nginx: its process, its HTTPS port, certificate and error log."""

    process: Process
    https_port: int
    certificate: Path
    error_log: Path

    @property
    def url(self) -> str:
        """The dashboard's base address through nginx (TLS, the path prefix)."""
        return f"https://127.0.0.1:{self.https_port}{PREFIX}"

    def errors_since(self, offset: int) -> list[str]:
        """The error log's lines after its first ``offset`` bytes."""
        with open(self.error_log, "rb") as handle:
            handle.seek(offset)
            return handle.read().decode(errors="replace").splitlines()

    def error_log_size(self) -> int:
        """The error log's length in bytes now (an offset for :meth:`errors_since`)."""
        return self.error_log.stat().st_size if self.error_log.exists() else 0


def filled(text: str, values: Mapping[str, str], name: str) -> str:
    """``text`` with each ``${NAME}`` replaced by ``values[NAME]``; a placeholder without a
    value is a ``KeyError`` naming it and the file ``name`` (nginx's own ``$vars`` stay)."""
    missing = sorted({found for found in _PLACEHOLDER.findall(text) if found not in values})
    if missing:
        raise KeyError(f"{name}: no value for the placeholders {missing}")
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], text)


def certificate(folder: Path) -> tuple[Path, Path]:
    """A throwaway self-signed certificate for 127.0.0.1 and localhost, and its key."""
    cert, key = folder / "tls.crt", folder / "tls.key"
    args = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
    args += ["-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2"]
    args += ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"openssl could not make a certificate: {done.stderr[-1000:]}")
    return cert, key


def main_config(root: Path) -> str:
    """The main ``nginx.conf`` around the site: foreground, a worker per core, every path
    under ``root``, no access log (the clients count every request)."""
    temps = "\n".join(f"    {name}_temp_path {root / 'temp' / name};" for name in _TEMP_DIRS)
    user = "user root;\n" if os.geteuid() == 0 else ""
    return (
        f"{user}daemon off;\nworker_processes auto;\npid {root / 'nginx.pid'};\n"
        f"error_log {root / 'logs' / 'error.log'} warn;\n"
        "events { worker_connections 4096; }\n"
        "http {\n"
        "    access_log off;\n"
        f"{temps}\n"
        f"    include conf.d/{SITE};\n"
        "}\n"
    )


def start_nginx(processes: Processes, root: Path, replicas: tuple[str, str]) -> Nginx:
    """nginx serving ``deploy/nginx/sumlens.conf`` in front of ``replicas`` (``host:port``
    each; the same address twice puts one replica behind it) from the folder ``root``."""
    if not NGINX.exists():
        raise FileNotFoundError(f"{NGINX} is missing: apt-get install nginx")
    for folder in ("conf/conf.d", "conf/snippets", "logs", *(f"temp/{n}" for n in _TEMP_DIRS)):
        (root / folder).mkdir(parents=True, exist_ok=True)
    cert, key = certificate(root)
    https_port, http_port = processes.port(), processes.port()
    values = {
        "SUMLENS_REPLICA_1": replicas[0],
        "SUMLENS_REPLICA_2": replicas[1],
        "SUMLENS_HTTPS_LISTEN": f"127.0.0.1:{https_port}",
        "SUMLENS_HTTP_LISTEN": f"127.0.0.1:{http_port}",
        "SUMLENS_SERVER_NAME": "127.0.0.1 localhost",
        "SUMLENS_TLS_CERTIFICATE": str(cert),
        "SUMLENS_TLS_KEY": str(key),
    }
    for path in (SITE_DIR / "snippets").glob("*.conf"):
        (root / "conf" / "snippets" / path.name).write_text(
            filled(path.read_text(), values, path.name)
        )
    (root / "conf" / "conf.d" / SITE).write_text(
        filled((SITE_DIR / SITE).read_text(), values, SITE)
    )
    main = root / "conf" / "nginx.conf"
    main.write_text(main_config(root))
    error_log = root / "logs" / "error.log"
    command = [str(NGINX), "-p", str(root), "-c", str(main), "-e", str(error_log)]
    checked = subprocess.run([*command, "-t"], capture_output=True, text=True, check=False)
    if checked.returncode != 0:
        raise RuntimeError(f"nginx -t refused {SITE}: {checked.stderr.strip()}")
    proc = processes.start("nginx", command)
    wait_answering(f"http://127.0.0.1:{http_port}/", proc, START_TIMEOUT_S)
    return Nginx(proc, https_port, cert, error_log)
