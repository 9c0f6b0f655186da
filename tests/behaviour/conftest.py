"""Every rule in this folder runs once per platform, through the real library and its fake."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

import pytest

from bot.core.service import QuizService
from tests.behaviour.harness import Harness
from tests.clock import FakeClock
from tests.errorlog import failing_on_errors

PLATFORMS = ("telegram", "discord")


@pytest.fixture(params=PLATFORMS)
async def h(
    request: pytest.FixtureRequest, service: QuizService, clock: FakeClock
) -> AsyncIterator[Harness]:
    start: Callable[[QuizService, FakeClock], AbstractAsyncContextManager[Harness]]
    if request.param == "telegram":
        from tests.behaviour.telegram import telegram_harness as start
    else:
        from tests.behaviour.discord import discord_harness as start
    with failing_on_errors("telegram", "discord", "bot", "aiohttp"):
        async with start(service, clock) as harness:
            yield harness
