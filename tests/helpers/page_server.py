"""Pages of another origin for the tests: a small HTML server on 127.0.0.1 (another port
than any dashboard's), for cross-origin writes, framing and the notebook's cell."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator

from helpers.board import free_port


class _Pages(http.server.BaseHTTPRequestHandler):
    """Answers the HTML of ``self.server.pages`` by path; 404 for any other path."""

    def do_GET(self) -> None:
        body = self.server.pages.get(self.path, "").encode()  # type: ignore[attr-defined]
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@contextlib.contextmanager
def page_server(pages: dict[str, str]) -> Iterator[int]:
    """A server on 127.0.0.1 answering ``pages`` (path -> HTML); yields its port (its
    pages are another origin than any dashboard's: ``http://127.0.0.1:PORT`` is
    same-site to one on 127.0.0.1, ``http://localhost:PORT`` cross-site)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Pages)
    server.pages = pages  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
