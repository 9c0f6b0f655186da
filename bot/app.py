"""Composition root: settings → catalog → storage → service → adapters, in one event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from datetime import timedelta
from collections.abc import AsyncIterator

from bot.adapters import Adapter
from bot.core.clock import Clock
from bot.content import load_catalog
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from bot.settings import Settings
from bot.storage import SqliteStorage

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def open_service(
    settings: Settings, clock: Clock | None = None
) -> AsyncIterator[QuizService]:
    """Load and validate the content (all or nothing), open the database, build the core."""
    catalog = load_catalog(settings.quizbot_content_dir)
    storage = SqliteStorage(settings.quizbot_database)
    await storage.open()
    try:
        yield QuizService(
            catalog, storage, clock,
            question_time=timedelta(seconds=settings.quizbot_question_seconds),
        )
    finally:
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


async def run_adapters(service: QuizService, adapters: list[Adapter]) -> None:
    """Start every adapter (each connects itself to the service) and the scheduler that
    drives daily questions, closes and summaries; run until SIGINT/SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    started: list[Adapter] = []
    try:
        for adapter in adapters:
            await adapter.start()
            started.append(adapter)
            log.info("%s started", type(adapter).__name__)
        scheduler = Scheduler(service)
        await scheduler.start()
        try:
            await stop.wait()
        finally:
            log.info("stopping")
            await scheduler.stop()
    finally:
        for adapter in reversed(started):
            try:
                await adapter.stop()
            except Exception:
                log.exception("error while stopping %s", type(adapter).__name__)
