"""The daily question's streaks per chat, kept by the materializer for the dashboard's
overview: one row per person and chat with their run of consecutive days with a right daily
answer there (the latest day of it, its length, their best), so the overview counts the chat's
people on a streak from an index range instead of every person's daily answers. Written once
for both databases, like item_figures.py; no trigger.

A right answer to the daily question of day D continues the run if its last day is D - 1,
changes nothing if it is D (a second answer that day), starts a new run otherwise. A run is
current while its last day is the chat's newest daily question's or the day before (that
question may still be open), as day_streaks (bot/core/schedule.py) counts a person's.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

from bot.storage.sql import Sql

Run = tuple[date, int, int]  # last day, run, best

DAILY = (
    "SELECT chat_key, person_key, daily_date FROM answers WHERE {where}"
    " AND daily_date IS NOT NULL AND correct ORDER BY {order}"
)
STORED = (
    "SELECT chat_key, person_key, last_day, run, best FROM day_runs"
    " WHERE (chat_key, person_key) IN (SELECT chat_key, person_key FROM answers"
    " WHERE {where} AND daily_date IS NOT NULL AND correct)"
)
SAVE = (
    "INSERT INTO day_runs(chat_key, person_key, last_day, run, best)"
    " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (chat_key, person_key) DO UPDATE SET"
    " last_day = excluded.last_day, run = excluded.run, best = excluded.best"
)


def continued(run: Run | None, day: date) -> Run:
    """The run after a right answer to the daily question of `day`."""
    if run is None:
        return day, 1, 1
    last, length, best = run
    if day <= last:  # that day is counted (or an older day, applied late: left out)
        return run
    length = length + 1 if day - last == timedelta(days=1) else 1
    return day, length, max(best, length)


async def _save(db: Sql, runs: dict[tuple[str, str], Run]) -> None:
    for (chat, person), (last, length, best) in sorted(runs.items()):
        await db.run(SAVE, chat, person, db.day(last), length, best)


async def apply_chunk(db: Sql, where: str, order: str, *args: Any) -> None:
    """Continue the runs with the right daily answers `where` selects (a materializer's
    chunk, in `order`), inside the caller's transaction."""
    answers = await db.rows(DAILY.format(where=where, order=order), *args)
    if not answers:
        return
    runs: dict[tuple[str, str], Run] = {
        (r[0], r[1]): (db.on(r[2]), int(r[3]), int(r[4]))
        for r in await db.rows(STORED.format(where=where), *args)}
    changed: dict[tuple[str, str], Run] = {}
    for chat, person, day in answers:
        key = (chat, person)
        run = continued(runs.get(key), db.on(day))
        if run != runs.get(key):
            runs[key] = changed[key] = run
    await _save(db, changed)


async def recount(db: Sql, chat_key: str) -> None:
    """Count a chat's runs again from its answers (a chat's move)."""
    await db.run("DELETE FROM day_runs WHERE chat_key = $1", chat_key)
    runs: dict[tuple[str, str], Run] = {}
    for person, day in await db.rows(
        "SELECT person_key, daily_date FROM answers WHERE chat_key = $1"
        " AND daily_date IS NOT NULL AND correct ORDER BY person_key, daily_date", chat_key
    ):
        key = (chat_key, person)
        runs[key] = continued(runs.get(key), db.on(day))
    await _save(db, runs)


async def forget_person(db: Sql, person_key: str) -> None:
    """A person's deletion: their runs in every chat."""
    await db.run("DELETE FROM day_runs WHERE person_key = $1", person_key)


async def current_runs(db: Sql, chat_key: str, person_keys: Sequence[str]) -> dict[str, int]:
    """The people's current runs in the chat: a run is current while its last day is the
    chat's newest daily question's or the day before, as in `streaks`."""
    if not person_keys:
        return {}
    newest = await db.value(
        "SELECT max(local_date) FROM daily_posts WHERE chat_key = $1", chat_key)
    if newest is None:
        return {}
    since = db.on(newest) - timedelta(days=1)
    # by primary key, one row per person; the current-ness is checked here: a condition on
    # last_day lets a planner walk the chat's every current run instead (day_runs_current)
    marks = ", ".join(f"${n + 2}" for n in range(len(person_keys)))
    rows = await db.rows(
        "SELECT person_key, last_day, run FROM day_runs WHERE chat_key = $1"
        f" AND person_key IN ({marks})", chat_key, *person_keys)
    return {r[0]: int(r[2]) for r in rows if db.on(r[1]) >= since}


async def streaks(db: Sql, chat_key: str) -> tuple[int, int, int]:
    """(people on a streak now, the longest current streak, the longest ever) in the chat."""
    newest = await db.value(
        "SELECT max(local_date) FROM daily_posts WHERE chat_key = $1", chat_key)
    best = await db.value("SELECT max(best) FROM day_runs WHERE chat_key = $1", chat_key)
    if newest is None:
        return 0, 0, int(best or 0)
    since = db.on(newest) - timedelta(days=1)
    row = await db.row(
        "SELECT count(*), max(run) FROM day_runs WHERE chat_key = $1 AND last_day >= $2",
        chat_key, db.day(since))
    return (0, 0, int(best or 0)) if row is None else (
        int(row[0]), int(row[1] or 0), int(best or 0))
