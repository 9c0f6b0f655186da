"""Composition root and daemon life: settings → catalog → storage → service → adapters.

`quizbot run` starts like a daemon and ends like one: every start-up failure is one line on
stderr naming what to fix and a distinct exit status; a platform connection that is gone for
good ends the process (non-zero) so the supervisor restarts it or alerts; SIGTERM and SIGINT
drain within STOP_BUDGET (below Docker's default 10 s stop timeout) and exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import AsyncIterator
from datetime import timedelta
from enum import IntEnum
from typing import Any

from bot import __version__, health, metrics
from bot.adapters import Adapter, ConnectionLost, CredentialsRejected
from bot.content import Catalog, load_catalog
from bot.core.authoring import author_keys
from bot.core.clock import Clock
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from bot.i18n import translator
from bot.metrics_endpoint import MetricsEndpoint
from bot.reports.cards import PngCards
from bot.reports.png import PngCharts
from bot.reports.worker import DrawingProcess
from bot.settings import Settings
from bot.storage import storage_for

log = logging.getLogger(__name__)

STOP_BUDGET = 8.0  # seconds for draining on SIGTERM; Docker kills after 10


class Exit(IntEnum):
    """`quizbot` exit statuses (documented in the README)."""

    OK = 0
    CONTENT = 1  # a quiz pack is invalid or unreadable
    CONFIG = 2  # a setting is missing or malformed
    CREDENTIALS = 3  # a platform rejected the token (at start, or revoked later)
    STORAGE = 4  # the database cannot be used
    CONNECTION = 5  # a platform connection ended for good


@contextlib.asynccontextmanager
async def open_service(
    settings: Settings, clock: Clock | None = None
) -> AsyncIterator[QuizService]:
    """Load and validate the content (all or nothing, but a bad image is left out of its
    question and logged), open the database, build the core."""
    catalog = load_catalog(settings.quizbot_content_dir, settings.quizbot_cache_dir,
                           parse_apart=True, leave_out_bad_images=True)  # logged, not fatal
    storage = storage_for(settings.quizbot_database,  # a file: SQLite; a URL: PostgreSQL
                          aggregates_apart=settings.quizbot_sqlite_aggregates == "apart")
    await storage.open()
    drawing = DrawingProcess()  # charts and cards are drawn in a child process (worker.py)
    try:
        service = QuizService(
            catalog, storage, clock,
            question_time=timedelta(seconds=settings.quizbot_question_seconds),
            charts=PngCharts(drawing),
            cards=PngCards(settings.quizbot_cache_dir, drawing),  # kept beside the content cache
            authors=author_keys(settings.quizbot_authors),
            meter=metrics.METER if settings.metrics_listen else None,
            web=None if settings.web is None else (settings.web[2], settings.web[1]),
            holder=settings.quizbot_instance,
        )
        await service.authoring.load()  # packs written in chats (authoring.py)
        yield service
        await service.spaced.stop_refits()  # a round of fits in progress ends with the stop
    finally:
        drawing.close()
        await storage.close()


def configured_adapters(service: QuizService, settings: Settings) -> list[Adapter]:
    adapters: list[Adapter] = []
    if settings.telegram_bot_token is not None:
        from bot.adapters.telegram import TelegramAdapter

        adapters.append(TelegramAdapter(service, settings))
    if settings.discord_bot_token is not None:
        from bot.adapters.discord import DiscordAdapter

        adapters.append(DiscordAdapter(service, settings))
    return adapters


def catalog_size(catalog: Catalog) -> str:
    """ "6 quizzes, 48 questions": the ones offered (the operator's English, plurals through
    the catalog)."""
    en = translator("en")
    offered = list(catalog)
    questions = sum(len(q.questions) for q in offered)
    return (en.ngettext("{n} quiz", "{n} quizzes", len(offered)) + ", "
            + en.ngettext("{n} question", "{n} questions", questions))


def started_line(service: QuizService, adapters: list[Adapter], settings: Settings) -> str:
    return (f"quizbot {__version__} running: {', '.join(a.name for a in adapters)}; "
            f"database {settings.quizbot_database}; {catalog_size(service.catalog)}")


async def run_adapters(
    service: QuizService, adapters: list[Adapter], settings: Settings | None = None
) -> Exit:
    """Start every adapter (each connects itself to the service) and the scheduler; run
    until SIGINT/SIGTERM (Exit.OK) or until a platform connection is gone for good."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    started: list[Adapter] = []
    scheduler = Scheduler(service)
    watchers: dict[asyncio.Task[BaseException], Adapter] = {}
    endpoint = serve_metrics(settings)
    dashboard = None
    try:
        dashboard = await serve_dashboard(service, settings)
        for adapter in adapters:
            await adapter.start()
            started.append(adapter)
        if settings is not None:
            log.info("%s", started_line(service, started, settings))
            freeze_startup_objects()
        await scheduler.start()
        if settings is not None:
            health.forget_old(settings.quizbot_database)
            scheduler.on_round = lambda: health.beat(
                settings.quizbot_database, [a.name for a in started],
                settings.quizbot_instance,
            )
        watchers = {asyncio.create_task(a.wait_failed()): a for a in started}
        stopping = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({stopping, *watchers}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        for watcher, adapter in watchers.items():
            if watcher in done:
                log.info("%s connection ended for good", adapter.name)
                raise watcher.result()
        log.info("stopping: finishing what is in flight (at most %g s)", STOP_BUDGET)
        return Exit.OK
    finally:
        for task in watchers:
            task.cancel()
        await _drain(scheduler, started)
        if endpoint is not None:
            endpoint.shutdown()
            endpoint.server_close()
        if dashboard is not None:
            await dashboard.cleanup()


def freeze_startup_objects() -> None:
    """Take what start-up left alive (the catalog: a few objects per question, the
    libraries' modules) out of every later garbage collection: they live as long as the
    process, and each full collection would walk them all again. Then what start-up freed
    (the content cache's entries read, the modules compiled) goes back to the system:
    glibc's malloc keeps freed pages in the process otherwise (about 1 MB here)."""
    gc.collect()
    gc.freeze()
    _trim_malloc()


def _trim_malloc() -> None:
    import ctypes  # glibc's malloc_trim; elsewhere (musl, macOS) there is nothing to do

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def serve_metrics(settings: Settings | None) -> MetricsEndpoint | None:
    """The /metrics endpoint when QUIZBOT_METRICS_LISTEN is set; a port that cannot be
    listened on ends the start like the webhook's does."""
    listen = None if settings is None else settings.metrics_listen
    if settings is None or listen is None:
        return None
    try:
        return metrics.serve(*listen)
    except OSError as exc:
        raise ConnectionLost(
            f"cannot listen on QUIZBOT_METRICS_LISTEN={settings.quizbot_metrics_listen} "
            f"for Prometheus: {exc.strerror or exc}") from exc


async def serve_dashboard(service: QuizService, settings: Settings | None) -> Any:
    """The web dashboard (bot/web) when QUIZBOT_WEB_LISTEN is set; a port that cannot be
    listened on ends the start like the metrics endpoint's does."""
    web = None if settings is None else settings.web
    if settings is None or web is None:
        return None
    from bot.web.server import serve  # aiohttp and Jinja2 load only when it is on

    (host, port), url, _secret = web
    try:
        token = settings.telegram_bot_token
        return await serve(service, host, port, secure=url.startswith("https://"),
                           bot_token=None if token is None else token.get_secret_value())
    except OSError as exc:
        raise ConnectionLost(
            f"cannot listen on QUIZBOT_WEB_LISTEN={settings.quizbot_web_listen} for the "
            f"dashboard: {exc.strerror or exc}") from exc


async def _drain(scheduler: Scheduler, started: list[Adapter]) -> None:
    async def stop_all() -> None:
        await scheduler.stop()
        for adapter in reversed(started):
            try:
                await adapter.stop()
            except Exception:
                log.exception("error while stopping %s", adapter.name)

    try:
        await asyncio.wait_for(stop_all(), STOP_BUDGET)
    except TimeoutError:
        log.warning("stopping took over %g s; exiting anyway", STOP_BUDGET)


def exit_for(exc: BaseException) -> Exit | None:
    """The exit status for a failure `quizbot run` explains in one line; None: unexpected."""
    from bot.content import ContentError
    from bot.core.ports import StorageError

    if isinstance(exc, CredentialsRejected):
        return Exit.CREDENTIALS
    if isinstance(exc, ConnectionLost):
        return Exit.CONNECTION
    if isinstance(exc, StorageError):
        return Exit.STORAGE
    if isinstance(exc, ContentError):
        return Exit.CONTENT
    return None
