"""Debian's nginx in front of the tests' replicas, with the configuration ``deploy/`` ships.

:func:`running_nginx` fills a site file of ``deploy/nginx/`` (``sumlens.conf`` or
``auth_request.conf``) and its snippets with the test's ports and paths (the ``${NAME}``
placeholders the files document, nothing else), lays them out as ``/etc/nginx`` holds
them (``conf.d/`` and ``snippets/`` beside a main ``nginx.conf``), and runs
``/usr/sbin/nginx`` in the foreground with its own prefix, pid, logs and temporary folders
in a temporary directory, listening on 127.0.0.1 only. :func:`self_signed` makes the
throwaway certificate the TLS server block needs.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

NGINX = Path("/usr/sbin/nginx")
DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
_PLACEHOLDER = re.compile(r"\$\{([A-Z0-9_]+)\}")
_TEMP_DIRS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


def fill(text: str, values: Mapping[str, str], name: str) -> str:
    """``text`` with each ``${NAME}`` replaced by ``values[NAME]``; a placeholder without a
    value raises ``KeyError`` naming it and the file ``name`` (nginx's own ``$vars`` stay)."""
    missing = sorted({found for found in _PLACEHOLDER.findall(text) if found not in values})
    if missing:
        raise KeyError(f"{name}: no value for the placeholders {missing}")
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], text)


def self_signed(
    directory: Path, names: tuple[str, ...] = ("127.0.0.1", "localhost")
) -> tuple[Path, Path]:
    """A throwaway certificate for ``names`` and its key, written under ``directory``;
    returns (certificate, key)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    alternatives: list[x509.GeneralName] = []
    for name in names:
        try:
            alternatives.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alternatives.append(x509.DNSName(name))
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "tls.crt", directory / "tls.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@dataclass(frozen=True)
class Nginx:
    """A running nginx: its HTTPS and HTTP ports on 127.0.0.1 and its certificate."""

    https_port: int
    http_port: int
    certificate: Path
    log_dir: Path

    @property
    def url(self) -> str:
        """The dashboard's address through nginx (TLS, the path prefix, a trailing slash)."""
        return f"https://127.0.0.1:{self.https_port}/sumlens/"

    def errors(self) -> str:
        """nginx's error log so far (for a failing test's message)."""
        path = self.log_dir / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _main_config(root: Path, site: str) -> str:
    """The main ``nginx.conf`` around the site: foreground, one worker, every path under
    ``root`` (a root user's workers run as root: the temporary folders are the test's)."""
    temps = "\n".join(f"    {name}_temp_path {root / 'temp' / name};" for name in _TEMP_DIRS)
    user = "user root;\n" if os.geteuid() == 0 else ""
    return (
        f"{user}daemon off;\nworker_processes 1;\npid {root / 'nginx.pid'};\n"
        f"error_log {root / 'logs' / 'error.log'} info;\n"
        "events { worker_connections 1024; }\n"
        "http {\n"
        f"    access_log {root / 'logs' / 'access.log'};\n"
        f"{temps}\n"
        f"    include conf.d/{site};\n"
        "}\n"
    )


@contextmanager
def running_nginx(
    root: Path,
    site: str,
    replicas: list[str],
    extra: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> Iterator[Nginx]:
    """nginx serving ``deploy/nginx/<site>`` in front of ``replicas`` (``host:port``, two)
    from the folder ``root``; ``extra`` fills the site's other placeholders (``OAUTH2_PROXY``).
    Stopped gracefully (SIGQUIT) at the end of the block."""
    if not NGINX.exists():
        raise FileNotFoundError(f"{NGINX} is missing: apt-get install nginx (.ci/run does it)")
    for folder in ("conf/conf.d", "conf/snippets", "logs", *(f"temp/{n}" for n in _TEMP_DIRS)):
        (root / folder).mkdir(parents=True, exist_ok=True)
    certificate, key = self_signed(root)
    https_port, http_port = _free_port(), _free_port()
    values = {
        "SUMLENS_REPLICA_1": replicas[0],
        "SUMLENS_REPLICA_2": replicas[1],
        "SUMLENS_HTTPS_LISTEN": f"127.0.0.1:{https_port}",
        "SUMLENS_HTTP_LISTEN": f"127.0.0.1:{http_port}",
        "SUMLENS_SERVER_NAME": "127.0.0.1 localhost",
        "SUMLENS_TLS_CERTIFICATE": str(certificate),
        "SUMLENS_TLS_KEY": str(key),
        **(extra or {}),
    }
    source = DEPLOY / "nginx"
    for path in (source / "snippets").glob("*.conf"):
        text = fill(path.read_text(), values, path.name)
        (root / "conf" / "snippets" / path.name).write_text(text)
    site_path = source / site
    (root / "conf" / "conf.d" / site).write_text(fill(site_path.read_text(), values, site))
    main = root / "conf" / "nginx.conf"
    main.write_text(_main_config(root, site))
    command = [str(NGINX), "-p", str(root), "-c", str(main), "-e", str(root / "logs" / "error.log")]
    checked = subprocess.run([*command, "-t"], capture_output=True, text=True)
    if checked.returncode != 0:
        raise RuntimeError(f"nginx -t refused {site}: {checked.stderr.strip()}")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = Nginx(https_port, http_port, certificate, root / "logs")
    try:
        _wait_listening(https_port, process, server, timeout)
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGQUIT)  # finish what is in flight, then stop
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(root / "temp", ignore_errors=True)


def _wait_listening(
    port: int, process: subprocess.Popen[bytes], server: Nginx, timeout: float
) -> None:
    """Return once nginx accepts connections on ``port``; raise when it exits or the bound
    passes first."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited ({process.returncode}): {server.errors()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not listen within {timeout} s") from None
            time.sleep(0.02)


def _free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
