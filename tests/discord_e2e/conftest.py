"""Fixtures for the Discord end-to-end tests: the real discord.py against tests/fakes/discord_api.

Every test gets a fresh fake server and fresh clients (discord.py's close() leaves a Client
unusable), and fails on any ERROR logged by discord.py, the bot or the fake's aiohttp server:
discord.py only logs exceptions in commands and views, so a broken handler would otherwise
look like a timeout.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import discord.http
import pytest
from discord.gateway import DiscordWebSocket

from bot.adapters.discord import DiscordAdapter
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from tests.discord_e2e.helpers import make_settings
from tests.errorlog import ErrorLog, failing_on_errors
from tests.fakes.discord_api import FakeDiscord, User

WATCHED = ("discord", "bot", "aiohttp")


@pytest.fixture(autouse=True)
def error_log() -> Iterator[ErrorLog]:
    with failing_on_errors(*WATCHED) as handler:
        yield handler


@pytest.fixture(autouse=True)
def restore_discord_urls() -> Iterator[None]:
    # start() points these class attributes at the fake; leave the library as found
    base, gateway = discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    yield
    discord.http.Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = base, gateway


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    server = FakeDiscord()
    await server.start()
    yield server
    await server.close()


StartBot = Callable[..., Awaitable[DiscordAdapter]]

# Small timings so the suite is fast: READY at once, count edits at most every 0.2 s, the
# shards of a sharded bot IDENTIFY one after the other without Discord's 5 s between them.
FAST = {"guild_ready_timeout": 0.05, "ready_timeout": 5.0, "live_interval": 0.2,
        "identify_interval": 0.0}


@pytest.fixture
async def start_bot(fake: FakeDiscord, service: QuizService) -> AsyncIterator[StartBot]:
    """Start a new adapter (a new process, as far as Discord can tell); stopped at the end."""
    started: list[DiscordAdapter] = []

    async def start(**options: Any) -> DiscordAdapter:
        settings = make_settings(fake, **options.pop("settings", {}))
        core = options.pop("service", service)
        adapter = DiscordAdapter(core, settings, **(FAST | options))
        started.append(adapter)
        await adapter.start()
        return adapter

    yield start
    for adapter in reversed(started):
        await adapter.stop()


@pytest.fixture
async def bot(start_bot: StartBot) -> DiscordAdapter:
    return await start_bot()


@pytest.fixture
def scheduler(service: QuizService) -> Scheduler:
    """The core's one loop, driven by hand: move the clock, then `await scheduler.tick()`."""
    return Scheduler(service)


@pytest.fixture
def alice() -> User:
    return User(900_000_000_000_000_001, "Alice")


@pytest.fixture
def bob() -> User:
    return User(900_000_000_000_000_002, "Bob")
