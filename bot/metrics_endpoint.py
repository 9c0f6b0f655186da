"""The /metrics endpoint's HTTP server: one thread with its own event loop, whatever the number
of connections.

prometheus_client's own server starts a thread per connection and waits for headers without a
limit: 1,500 half-open connections to a port documented on 0.0.0.0 burned 1.75 cores and
starved the bot. Here a connection is a coroutine; at most MAX_CONNECTIONS are open: one more
closes the one that has waited longest for its request's head (so half-open connections cannot
lock the scraper out), or, with every one being answered, is answered 503 and closed. A
request's head must arrive within HEADER_TIMEOUT and fit HEAD_BYTES; each connection serves
one request. Refusals are logged as counts
(bot/counted_log.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from bot.counted_log import CountedLog

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 64  # a scraper uses one at a time
HEADER_TIMEOUT = 5.0  # seconds for the request line and headers
HEAD_BYTES = 8 * 1024


def _response(status: str, body: bytes, content_type: str = "text/plain; charset=utf-8"
              ) -> bytes:
    return (f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


class MetricsEndpoint:
    """Serves `registry` on host:port from a daemon thread until `shutdown()`; binding
    happens at construction (OSError if the port is taken)."""

    def __init__(self, host: str, port: int, registry: CollectorRegistry, *,
                 max_connections: int = MAX_CONNECTIONS,
                 header_timeout: float = HEADER_TIMEOUT) -> None:
        self.registry = registry
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        # the connections being served, oldest first: True while waiting for their head
        self._served: dict[asyncio.StreamWriter, bool] = {}
        self.refusals = CountedLog(log)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.create_server((host, port), family=family, backlog=128)
        self.server_port: int = self.socket.getsockname()[1]
        self._loop = asyncio.new_event_loop()
        self._stopped: asyncio.Event | None = None
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,),
                                        name="quizbot-metrics", daemon=True)
        self._thread.start()
        ready.wait()

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._main(ready))
        finally:
            self._loop.close()

    async def _main(self, ready: threading.Event) -> None:
        self._stopped = asyncio.Event()
        server = await asyncio.start_server(self._serve, sock=self.socket,
                                            limit=HEAD_BYTES)
        ready.set()
        await self._stopped.wait()
        server.close()
        for writer in list(self._served):
            writer.transport.abort()  # each connection's coroutine then ends
        connections = asyncio.all_tasks() - {asyncio.current_task()}
        if connections:
            await asyncio.wait(connections, timeout=self.header_timeout)

    @property
    def open(self) -> int:
        """Connections being served."""
        return len(self._served)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._served) >= self.max_connections:
            oldest = next((w for w, waiting in self._served.items() if waiting), None)
            if oldest is None:
                self.refusals.event("metrics connections refused",
                                    "metrics connection refused: %d open, the cap",
                                    self.max_connections)
                await self._send(writer, _response("503 Service Unavailable",
                                                   b"Too crowded\n"))
                return
            self.refusals.event("metrics connections closed at the cap",
                                "metrics endpoint at its cap of %d connections: the one "
                                "waiting longest for its request closed", self.max_connections)
            del self._served[oldest]
            oldest.transport.abort()  # its read ends at once (a cancelled task is logged)
        self._served[writer] = True
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"),
                                              self.header_timeout)
            except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                    ConnectionError):
                return  # closed without an answer: nothing complete was asked
            if writer in self._served:
                self._served[writer] = False
            parts = head.split(b"\r\n", 1)[0].split(b" ")
            method, path = (parts[0], parts[1].split(b"?", 1)[0]) if len(parts) == 3 \
                else (b"", b"")
            if method not in (b"GET", b"HEAD"):
                reply = _response("405 Method Not Allowed", b"GET /metrics\n")
            elif path not in (b"/metrics", b"/"):
                reply = _response("404 Not Found", b"GET /metrics\n")
            else:
                body = generate_latest(self.registry)
                reply = _response("200 OK", b"" if method == b"HEAD" else body,
                                  CONTENT_TYPE_LATEST)
            await self._send(writer, reply)
        finally:
            self._served.pop(writer, None)
            writer.close()

    async def _send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        with contextlib.suppress(ConnectionError, TimeoutError):
            writer.write(data)
            await asyncio.wait_for(writer.drain(), self.header_timeout)
        writer.close()

    def shutdown(self) -> None:
        """Stop serving and end the thread."""
        if self._thread.is_alive() and self._stopped is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
            self._thread.join()

    def server_close(self) -> None:
        self.socket.close()
