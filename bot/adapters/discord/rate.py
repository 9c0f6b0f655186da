"""Discord's global rate limit paced ahead of time (issue 36): 50 requests a second per bot
token (discord.com/developers/docs/topics/rate-limits). discord.py follows each route's
bucket from the X-RateLimit headers and waits out a global 429, but does not pace the
global limit ahead, and knows nothing of other processes or shards on the same token.

Every request discord.py makes with the bot's token (`HTTPClient.request`) first takes a slot
of the token's budget (bot/adapters/budget.py): this process's own, or, on PostgreSQL where
several processes hold the token's shards, slices of one budget shared through the database.
Interaction responses and follow-ups are exempt from the global limit and do not take one:
discord.py sends them through its webhook adapter, not `HTTPClient.request`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import discord

from bot.adapters.budget import LocalBudget, SharedBudget, TokenBudget, wait_for_slot
from bot.core.service import QuizService
from bot.settings import Settings

GLOBAL_RATE = 50.0  # requests a second per bot token


def pace(http: discord.http.HTTPClient, budget: TokenBudget, *,
         clock: Callable[[], float] = time.time,
         sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
    """Every request of `http` waits for a slot of `budget` first."""
    request = http.request

    async def paced(route: discord.http.Route, **kwargs: Any) -> Any:
        await wait_for_slot(budget, clock, sleep)
        return await request(route, **kwargs)

    http.request = paced  # type: ignore[method-assign]


def budget_for(service: QuizService, settings: Settings, token: str) -> TokenBudget:
    """The token's budget: shared through the database on PostgreSQL (several processes),
    this process's own on SQLite. Named by the token's first part (the bot's id in base64,
    public), never the token."""
    if isinstance(settings.quizbot_database, Path):
        return LocalBudget(GLOBAL_RATE)
    name = f"discord:{token.partition('.')[0]}"

    async def lease(now: float, count: int, interval: float) -> float:
        return await service.lease_sends(name, now, count, interval)

    return SharedBudget(lease, GLOBAL_RATE)
