"""A bot token's send budget shared by every process on the database (issue 36): one row per
token holding the time of its next free send slot. A process leases a slice of consecutive
slots in one statement (the row moves on by the slice), so the processes together send no
faster than the platform allows the token, whatever their number; the adapter's pacer
(bot/adapters/telegram/rate.py SharedBudget) hands the slots out.

Times are seconds of the Unix epoch (the processes' clocks, in sync by NTP as the daily
schedules already need), stored as a float: slots are 33 ms apart, far above its precision.
"""

from __future__ import annotations

from bot.storage.sql import Sql


async def lease_sends(db: Sql, name: str, now: float, count: int, interval: float) -> float:
    """The first of `count` slots `interval` seconds apart, none before `now`, taken for
    good from budget `name` (count 0: nothing is taken, and no slot is before `now`)."""
    span = count * interval
    first = await db.value(
        "INSERT INTO send_budgets(name, next_at) VALUES ($1, $2)"
        " ON CONFLICT (name) DO UPDATE SET next_at = CASE"
        " WHEN send_budgets.next_at > $3 THEN send_budgets.next_at ELSE $3 END + $4"
        " RETURNING next_at",
        name, now + span, now, span,
    )
    return float(first) - span
