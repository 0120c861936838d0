"""A TCP proxy on 127.0.0.1 that gives every HTTP request a fixed latency and logs it.

``benchmarks.bench_remote`` puts it between moto's S3 server and both contenders, so that each
request costs what one costs a same-region object store (moto answers on the loopback in
well under a millisecond). The delay is per request, not per connection: on a kept-alive
connection, bytes from the client that arrive after the server has started answering are a
new request, which waits ``--latency-ms`` before it is passed on (HTTP clients do not
pipeline). Every request is logged: its arrival and the time of its last response byte,
its method and target (from the request line), the bytes each way and whether it opened
its connection. The log is served as JSON on a second port: ``GET /log?since=N`` returns
the records from the N-th on.

Run from the repository root as ``python -m benchmarks.harness.latency_proxy --port P
--upstream U --control C --latency-ms 20`` (``benchmarks.remote.store`` starts it); it
serves until it is terminated.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from benchmarks.harness.clock import shared_now

HOST = "127.0.0.1"
CHUNK = 256 * 1024
"""Bytes read from a socket at a time."""


@dataclass
class Record:
    """One request as the proxy saw it (times are :func:`shared_now`, machine-wide)."""

    start: float
    method: str
    target: str
    new_connection: bool
    end: float | None = None
    sent: int = 0
    received: int = 0

    def row(self) -> list[object]:
        """The record as a JSON row: start, end, method, target, new connection, bytes
        sent to the store, bytes received from it."""
        return [
            self.start,
            self.end,
            self.method,
            self.target,
            self.new_connection,
            self.sent,
            self.received,
        ]


@dataclass
class Link:
    """One client connection: the request being answered, and whether its answer began."""

    current: Record | None = None
    answered: bool = True


class Proxy:
    """The request log and the two directions of every proxied connection."""

    def __init__(self, upstream: int, latency_s: float) -> None:
        self.upstream = upstream
        self.latency_s = latency_s
        self.records: list[Record] = []

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Proxy one client connection until either side closes it."""
        try:
            up_reader, up_writer = await asyncio.open_connection(HOST, self.upstream)
        except OSError:
            writer.close()
            return
        link = Link()
        tasks = [
            asyncio.ensure_future(self._requests(reader, up_writer, link)),
            asyncio.ensure_future(self._responses(up_reader, writer, link)),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            for side in (writer, up_writer):
                side.close()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _requests(
        self,
        reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
        link: Link,
    ) -> None:
        first = True
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(CHUNK):
                if link.answered or link.current is None:  # after an answer: the next request
                    link.answered = False
                    link.current = _record(data, first)
                    self.records.append(link.current)
                    first = False
                    await asyncio.sleep(self.latency_s)
                link.current.sent += len(data)
                up_writer.write(data)
                await up_writer.drain()

    async def _responses(
        self,
        up_reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        link: Link,
    ) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await up_reader.read(CHUNK):
                link.answered = True
                current = link.current
                writer.write(data)
                await writer.drain()
                if current is not None:
                    current.received += len(data)
                    current.end = shared_now()

    async def control(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Answer ``GET /log?since=N`` with the records from the N-th on."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            target = head.split(b" ", 2)[1].decode()
            since = int(parse_qs(urlsplit(target).query).get("since", ["0"])[0])
            body = json.dumps({"records": [r.row() for r in self.records[since:]]}).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, IndexError):
            writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        finally:
            writer.close()


def _record(data: bytes, new_connection: bool) -> Record:
    """A record for the request whose first bytes are ``data``."""
    line = data.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
    method, target = (line[0], line[1]) if len(line) >= 2 else ("?", "")
    return Record(shared_now(), method, target[:300], new_connection)


async def serve(port: int, upstream: int, control: int, latency_s: float) -> None:
    """Serve the proxy and its log until cancelled."""
    proxy = Proxy(upstream, latency_s)
    proxied = await asyncio.start_server(proxy.connection, HOST, port, backlog=1024)
    log = await asyncio.start_server(proxy.control, HOST, control)
    async with proxied, log:
        await asyncio.gather(proxied.serve_forever(), log.serve_forever())


def main() -> None:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True, help="where clients connect")
    parser.add_argument("--upstream", type=int, required=True, help="the server's port")
    parser.add_argument("--control", type=int, required=True, help="where the log is served")
    parser.add_argument("--latency-ms", type=float, default=20.0)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port, args.upstream, args.control, args.latency_ms / 1000))


if __name__ == "__main__":
    main()
