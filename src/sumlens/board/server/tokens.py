"""The token file and the session cookie made from it (``--auth token``).

The token file (lines ``name:token``, :func:`sumlens.board.settings.read_token_file`) is
read when the server starts and again whenever it changes (modification time, size,
inode), so a token added or revoked takes effect without a restart; a file that is gone or
edited into a bad state accepts no token (said in the log) until it is mended. Tokens are
compared in constant time, as SHA-256 digests (a compare then takes no longer for a longer
match).

The session cookie is ``name.expiry.mac``, the MAC an HMAC-SHA256 keyed with the SHA-256
of the name's token over ``name|expiry``. Any replica holding the same token file checks
it: no other shared secret, no server-side session table. Revoking a token (removing its
line) ends its sessions; a cookie lives :data:`SESSION_SECONDS` at most.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading
import time
from pathlib import Path

from sumlens.board.settings import BoardSettingsError, read_token_file

_log = logging.getLogger("sumlens.board")

SESSION_SECONDS = 12 * 3600
"""How long a session cookie is good for."""
COOKIE_NAME = "sumlens_session"


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


class TokenBook:
    """The tokens of a token file, kept up to date with the file; names who holds a token
    or made a session cookie."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = _signature(path)
        self._tokens = read_token_file(path)

    def _current(self) -> dict[str, str]:
        """The tokens, read again when the file changed (its modification time, size or
        inode). A file that is gone, unreadable or no longer a token file holds no token:
        deleting or emptying it revokes every token, and a broken edit refuses everyone
        (said in the log) until the file is mended; it is read again at the next request,
        so a write caught half way is taken up once it is whole."""
        try:
            seen: tuple[int, int, int] | None = _signature(self.path)
        except OSError:
            seen = None
        with self._lock:
            if seen is not None and seen == self._seen:
                return self._tokens
            try:
                tokens = read_token_file(self.path)
            except BoardSettingsError as err:
                if self._tokens:
                    _log.warning("%s: no token is accepted until it is mended", err)
                self._tokens, self._seen = {}, None
                return self._tokens
            self._tokens, self._seen = tokens, seen
            return self._tokens

    def name_of(self, token: str) -> str | None:
        """The name of ``token`` in the file, or None (every entry compared, in constant
        time)."""
        given = _digest(token)
        found = None
        for name, known in self._current().items():
            if hmac.compare_digest(given, _digest(known)):
                found = name
        return found

    def make_session(self, name: str, now: float | None = None) -> str:
        """A session cookie value for ``name`` (a name in the file), good for
        :data:`SESSION_SECONDS` from ``now``."""
        expiry = int((time.time() if now is None else now) + SESSION_SECONDS)
        return f"{name}.{expiry}.{self._mac(name, expiry, self._current()[name])}"

    def session_name(self, value: str, now: float | None = None) -> str | None:
        """The name a session cookie was made for, or None when it is not one of ours,
        has expired, or its token is no longer in the file."""
        name, _, rest = value.rpartition(".")
        name, _, expiry_text = name.rpartition(".")
        if not name or not expiry_text.isdigit():
            return None
        expiry = int(expiry_text)
        moment = time.time() if now is None else now
        if not moment < expiry <= moment + SESSION_SECONDS + 60:
            return None
        token = self._current().get(name)
        if token is None:
            return None
        return name if hmac.compare_digest(rest, self._mac(name, expiry, token)) else None

    @staticmethod
    def _mac(name: str, expiry: int, token: str) -> str:
        return hmac.new(_digest(token), f"{name}|{expiry}".encode(), hashlib.sha256).hexdigest()


def _signature(path: Path) -> tuple[int, int, int]:
    """What tells a changed file: its modification time (ns), size and inode."""
    found = path.stat()
    return found.st_mtime_ns, found.st_size, found.st_ino
