"""The dashboard's HTTP server: an aiohttp application in the bot's own event loop, started by
bot/app.py when QUIZBOT_WEB_LISTEN is set (like the metrics endpoint, bot/metrics.py).

aiohttp's access log is off: its lines would carry `/open/<token>` paths. Each request is
logged here instead, with the route's name and never a token or a cookie.

The dashboard faces strangers, so connections are bounded: at most MAX_CONNECTIONS at once (a
thousand idle ones would otherwise take every file descriptor the bot has, its platform
connections' too). A new one over the cap closes the connection that has waited longest for a
request, so idle connections cannot lock readers out; with none waiting (every one in a
request) it is answered 503 and closed. One that sends no complete request within
IDLE_TIMEOUT is closed, also before its first request (slow headers). Refusals are logged as
counts (bot/counted_log.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.core.service import QuizService
from bot.counted_log import CountedLog
from bot.i18n import translator
from bot.web.assignments import AssignmentPages
from bot.web.auth import reader_locale
from bot.web.misconceptions import MisconceptionPages
from bot.web.missing import NotHere
from bot.web.pages import Pages, html
from bot.web.peer_gains import PeerGainPages
from bot.web.sessions import SessionPages

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
MAX_CONNECTIONS = 256  # at once; a page and its assets take a few per reader
IDLE_TIMEOUT = 15.0  # seconds a connection may wait for (the rest of) a request
# how the runner is made, here and in the tests: no access log (see above), and idle
# connections closed (aiohttp's keep-alive timer also runs before the first request)
RUNNER_OPTIONS: dict[str, Any] = {"access_log": None, "keepalive_timeout": IDLE_TIMEOUT}
REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
           b"Content-Length: 12\r\nRetry-After: 5\r\nConnection: close\r\n\r\nToo crowded\n")


class _Refused(asyncio.Protocol):
    """A connection over the cap: answered 503 at once and closed."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(REFUSED)
        transport.close()


def capped(server: web.Server, cap: int) -> Callable[[], asyncio.BaseProtocol]:
    """The protocol factory for a listening socket: `server`'s handler while fewer than
    `cap` connections are open, else one waiting for a request closed, else a refusal."""
    refusals = CountedLog(log)

    def factory() -> asyncio.BaseProtocol:
        connections = server.connections  # oldest first
        if len(connections) >= cap:
            waiting = next((c for c in connections if _waiting(c)), None)
            if waiting is None:
                refusals.event("dashboard connections refused",
                               "dashboard connection refused: %d open, the cap", cap)
                return _Refused()
            refusals.event("dashboard connections closed at the cap",
                           "dashboard at its cap of %d connections: the one idle longest "
                           "closed", cap)
            waiting.force_close()
        return server()
    return factory


def _waiting(handler: web.RequestHandler) -> bool:
    """Whether the connection waits for a request (not in one): aiohttp's own test for an
    idle connection when its keep-alive timer fires (web_protocol._process_keepalive)."""
    waiter = getattr(handler, "_waiter", None)
    return waiter is not None and not waiter.done()


class Dashboard:
    """The listening dashboard: `cleanup()` stops it."""

    def __init__(self, runner: web.AppRunner, listener: asyncio.Server) -> None:
        self.runner = runner
        self.listener = listener

    @property
    def port(self) -> int:
        return int(self.listener.sockets[0].getsockname()[1])

    async def cleanup(self) -> None:
        self.listener.close()
        await self.runner.cleanup()  # closes the connections


@web.middleware
async def not_found_page(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Any 404 as a page in the reader's language (missing.py), the same status."""
    try:
        return await handler(request)
    except web.HTTPNotFound as exc:
        t = translator(reader_locale(request))
        why = t.gettext(exc.why) if isinstance(exc, NotHere) else None
        return html("missing.html", {"t": t.gettext, "locale": t.locale, "why": why},
                    status=404)


@web.middleware
async def request_log(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    started = time.perf_counter()
    response = await handler(request)
    route = request.match_info.route.resource
    where = route.canonical if route is not None else "?"
    log.debug("%s %s %d in %.1f ms", request.method, where, response.status,
              (time.perf_counter() - started) * 1000)
    return response


def build_app(service: QuizService, *, secure: bool, bot_token: str | None = None
              ) -> web.Application:
    """`secure`: the public URL is https (cookies get the Secure flag); `bot_token`:
    Telegram's, which signs the Mini App's launches (None: the Mini App refuses them)."""
    app = web.Application(middlewares=[request_log, not_found_page],
                          client_max_size=64 * 1024)
    pages = Pages(service, secure, bot_token)
    app.add_routes(pages.routes())
    app.add_routes(SessionPages(service, secure, bot_token).routes())
    app.add_routes(MisconceptionPages(service, secure, bot_token).routes())  # misconceptions
    app.add_routes(AssignmentPages(service, secure, bot_token).routes())  # /assign
    app.add_routes(PeerGainPages(service, secure, bot_token).routes())  # /peer's gains
    app.router.add_static("/static/", STATIC, append_version=True)
    return app


async def serve(service: QuizService, host: str, port: int, *, secure: bool,
                bot_token: str | None = None, max_connections: int = MAX_CONNECTIONS
                ) -> Dashboard:
    """Listen on host:port; OSError if the port is taken."""
    runner = web.AppRunner(build_app(service, secure=secure, bot_token=bot_token),
                           **RUNNER_OPTIONS)
    await runner.setup()
    assert runner.server is not None
    try:
        listener = await asyncio.get_running_loop().create_server(
            capped(runner.server, max_connections), host, port, backlog=128)
    except OSError:
        await runner.cleanup()
        raise
    log.info("dashboard at http://%s:%d (links start with %s)", host, port,
             service.dashboard.base_url)
    return Dashboard(runner, listener)
