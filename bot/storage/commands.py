"""The keys of the commands handled (core/ports/exactly_once.py CommandKey), written once for every
database: a command's effect and its key are one transaction, so a redelivered command finds
its key and its effect is not repeated."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from bot.storage.sql import Sql

# What an effect write returns when its command's key was stored before (nothing was written).
ALREADY = "quizbot:already-handled"


async def claim_command(db: Sql, key: str, when: datetime) -> bool:
    return await db.run(
        "INSERT INTO handled_commands(key, handled_at) VALUES ($1, $2)"
        " ON CONFLICT (key) DO NOTHING", key, db.when(when),
    ) == 1


async def claimed_then(
    db: Sql, key: str, when: datetime, effect: Callable[..., Any], *args: Any
) -> Any:
    """`effect` in the same transaction as its command's key; ALREADY (and nothing written)
    if the key was there. On PostgreSQL a second process inserting the same key waits for
    the first one's transaction and then finds it."""
    if not await claim_command(db, key, when):
        return ALREADY
    return await effect(db, *args)


async def forget_commands(db: Sql, handled_before: datetime) -> int:
    return await db.run("DELETE FROM handled_commands WHERE handled_at < $1",
                        db.when(handled_before))
