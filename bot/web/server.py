"""The dashboard's HTTP server: an aiohttp application in the bot's own event loop, started by
bot/app.py when QUIZBOT_WEB_LISTEN is set (like the metrics endpoint, bot/metrics.py).

aiohttp's access log is off: its lines would carry `/open/<token>` paths. Each request is
logged here instead, with the route's name and never a token or a cookie.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.core.service import QuizService
from bot.web.pages import Pages
from bot.web.sessions import SessionPages

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
# how the runner is made, here and in the tests: no access log (see above)
RUNNER_OPTIONS: dict[str, Any] = {"access_log": None}


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
    app = web.Application(middlewares=[request_log], client_max_size=64 * 1024)
    pages = Pages(service, secure, bot_token)
    app.add_routes(pages.routes())
    app.add_routes(SessionPages(service, secure, bot_token).routes())
    app.router.add_static("/static/", STATIC, append_version=True)
    return app


async def serve(service: QuizService, host: str, port: int, *, secure: bool,
                bot_token: str | None = None) -> web.AppRunner:
    """Listen on host:port; OSError if the port is taken."""
    runner = web.AppRunner(build_app(service, secure=secure, bot_token=bot_token),
                           **RUNNER_OPTIONS)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        raise
    log.info("dashboard at http://%s:%d (links start with %s)", host, port,
             service.dashboard.base_url)
    return runner
