"""The token file and the session cookie made from it (``--auth token``).

The token file (lines ``name:token``, :func:`sumlens.board.settings.read_token_file`) is
read when the server starts and again whenever its modification time changes, so a token
added or revoked takes effect without a restart (a file edited into a bad state is
refused with a warning, and the tokens read before stay). Tokens are compared in
constant time, as SHA-256 digests (a compare then takes no longer for a longer match).

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
        self._mtime = path.stat().st_mtime_ns
        self._tokens = read_token_file(path)

    def _current(self) -> dict[str, str]:
        """The tokens, read again when the file changed (kept when it can't be read)."""
        try:
            mtime = self.path.stat().st_mtime_ns
        except OSError as err:
            mtime = None
            problem = f"can't be read ({err.strerror})"
        with self._lock:
            if mtime is None or mtime == self._mtime:
                if mtime is None:
                    _log.warning("--token-file %s %s: keeping its tokens", self.path, problem)
                return self._tokens
            self._mtime = mtime
            try:
                self._tokens = read_token_file(self.path)
            except BoardSettingsError as err:
                _log.warning("%s; keeping the tokens read before", err)
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
