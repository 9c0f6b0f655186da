"""Leaderboards and personal stats: reads of the aggregates (reader thread), costing what
they show, not how many people or answers there are.

A board is a source table walked in rank order through an index (migration 7):
- all time:  totals      (chat_key, correct DESC, time_ms, person_key)   totals_rank
- one day:   scores      (chat_key, day, correct DESC, time_ms, person)  scores_rank
- the week:  week_scores (chat_key, correct DESC, time_ms, person_key)   week_rank
             the 7 days up to week_window.until, kept by the materializer
The top N is read with LIMIT first and the names joined to those N rows only; "my rank" is
1 + the people above me: rank_counts (people per board, number of correct answers and time
bucket, kept by the materializer: bot/storage/rank_buckets.py) gives those with more correct
answers and those level with me in a faster bucket, and the index counts only those of my own
bucket who were faster, a small share of however many are level with me; the day streaks of
every shown row come from one query of daily answers.

A board whose period does not line up with those tables (a week window that has not rolled to
today yet is rolled first, by the writer; a clock behind the newest answers) is summed from
`scores` the slow way, with the same result.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import date
from typing import Any

from bot.core.ports import ScoreRow
from bot.storage import rank_buckets
from bot.storage.sqlite import aggregates_file
from bot.storage.sqlite.materializer import WEEK_DAYS, week_start, week_until
from bot.storage.sqlite.reader import snapshot

Db = sqlite3.Connection
Board = tuple[list[ScoreRow], ScoreRow | None]
RANK = "correct DESC, time_ms, person_key"


@dataclass(frozen=True, slots=True)
class Roll:
    """The week window must first move forward to end on `until` (a write)."""

    until: str


def leaderboard(
    db: Db, chat: str, since_day: str | None, limit: int, person_key: str | None,
    may_roll: bool = True,
) -> Board | Roll:
    with snapshot(db):
        if since_day is None:
            return _ranked(db, "totals", "totals_rank", "chat_key=?", (chat,), limit,
                           person_key, ("all", chat, ""))
        until = week_until(db)  # no scores row is later than this day
        if until is None or since_day >= until:  # only since_day itself can hold rows
            return _ranked(db, "scores", "scores_rank", "chat_key=? AND day=?",
                           (chat, since_day), limit, person_key, ("day", chat, since_day))
        if since_day == week_start(until):
            return _ranked(db, "week_scores", "week_rank", "chat_key=?", (chat,), limit,
                           person_key, ("week", chat, ""))
        if since_day > week_start(until) and may_roll:
            return Roll(_day_after(since_day, WEEK_DAYS - 1))
        return _summed(db, chat, since_day, limit, person_key)


def _day_after(day: str, days: int) -> str:
    return date.fromordinal(date.fromisoformat(day).toordinal() + days).isoformat()


def _ranked(
    db: Db, table: str, index: str, where: str, params: tuple[Any, ...], limit: int,
    person_key: str | None, counts: tuple[str, str, str],
) -> Board:
    # the rank index yields rows in rank order (named: no statistics needed to pick it):
    # LIMIT stops the walk, then the N names are looked up
    ranked = f"{table} INDEXED BY {index}"
    rows = db.execute(
        "SELECT b.person_key, COALESCE(p.name, ''), b.correct, b.answered, b.time_ms FROM"
        f" (SELECT person_key, correct, answered, time_ms FROM {ranked} WHERE {where}"
        f"  ORDER BY {RANK} LIMIT ?) AS b"
        " LEFT JOIN persons AS p ON p.key = b.person_key",
        (*params, limit),
    ).fetchall()
    rows.sort(key=_rank_order)  # the join need not keep the order: N rows, in memory
    top = [ScoreRow(r[0], r[1], r[2], r[3], r[4], i) for i, r in enumerate(rows, start=1)]
    if person_key is None or any(row.person_key == person_key for row in top):
        return top, next((row for row in top if row.person_key == person_key), None)
    mine = db.execute(  # by primary key
        f"SELECT correct, answered, time_ms FROM {table} WHERE {where} AND person_key=?",
        (*params, person_key),
    ).fetchone()
    if mine is None:
        return top, None
    correct, answered, time_ms = mine
    return top, ScoreRow(person_key, _name(db, person_key), correct, answered, time_ms,
                         _above(db, ranked, where, params, counts, person_key, correct,
                                time_ms) + 1)


def _above(
    db: Db, ranked: str, where: str, params: tuple[Any, ...], counts: tuple[str, str, str],
    person_key: str, correct: int, time_ms: int,
) -> int:
    """The people above me: from rank_counts those with more correct answers and those level
    with me in a faster time bucket (a few rows per group), and in the rank index, without
    reading a table row, those of my own bucket who were faster (or as fast, with an earlier
    key): from the bucket's start up to me, or, when I am in its slower half, the bucket's
    people less those from me to its end."""
    bucket, low, high = rank_buckets.bounds(time_ms)
    group = "SELECT COALESCE(SUM(people), 0) FROM rank_counts WHERE board=? AND chat_key=?" \
        " AND day=? AND correct"
    mine = f"SELECT COUNT(*) FROM {ranked} WHERE {where} AND correct = ? AND time_ms"
    if 2 * time_ms <= low + high:
        return int(db.execute(
            f"SELECT ({group} > ?) + ({group} = ? AND bucket < ?)"
            f" + ({mine} >= ? AND time_ms < ?) + ({mine} = ? AND person_key < ?)",
            (*counts, correct, *counts, correct, bucket, *params, correct, low, time_ms,
             *params, correct, time_ms, person_key),
        ).fetchone()[0])
    return int(db.execute(
        f"SELECT ({group} > ?) + ({group} = ? AND bucket <= ?)"
        f" - ({mine} > ? AND time_ms < ?) - ({mine} = ? AND person_key >= ?)",
        (*counts, correct, *counts, correct, bucket, *params, correct, time_ms, high,
         *params, correct, time_ms, person_key),
    ).fetchone()[0])


def _rank_order(row: tuple[Any, ...]) -> tuple[int, int, str]:
    """(person, name, correct, answered, time_ms) in board order (UTF-8 byte order, which
    SQLite's BINARY collation uses, is code point order)."""
    return -row[2], row[4], row[0]


def _summed(
    db: Db, chat: str, since_day: str, limit: int, person_key: str | None
) -> Board:
    """Any period: sums each person's days (reads every row of the period)."""
    board = (
        "SELECT person_key, SUM(correct) AS correct, SUM(answered) AS answered,"
        " SUM(time_ms) AS time_ms FROM scores WHERE chat_key=? AND day>=? GROUP BY person_key"
    )
    params = (chat, since_day)
    rows = db.execute(
        f"WITH board AS ({board}) SELECT b.person_key, COALESCE(p.name, ''), b.correct,"
        f" b.answered, b.time_ms FROM (SELECT * FROM board ORDER BY {RANK} LIMIT ?) AS b"
        " LEFT JOIN persons AS p ON p.key = b.person_key"
        " ORDER BY b.correct DESC, b.time_ms, b.person_key",
        (*params, limit),
    ).fetchall()
    top = [ScoreRow(r[0], r[1], r[2], r[3], r[4], i) for i, r in enumerate(rows, start=1)]
    me = next((row for row in top if row.person_key == person_key), None)
    if me is None and person_key is not None:
        row = db.execute(
            f"WITH board AS ({board}), mine AS (SELECT * FROM board WHERE person_key=?) "
            "SELECT mine.correct, mine.answered, mine.time_ms,"
            " (SELECT COUNT(*) FROM board WHERE board.correct > mine.correct OR"
            "  (board.correct = mine.correct AND (board.time_ms < mine.time_ms OR"
            "   (board.time_ms = mine.time_ms AND board.person_key < mine.person_key))))"
            " FROM mine",
            (*params, person_key),
        ).fetchone()
        if row is not None:
            me = ScoreRow(person_key, _name(db, person_key), row[0], row[1], row[2], row[3] + 1)
    return top, me


def _name(db: Db, person_key: str) -> str:
    row = db.execute("SELECT name FROM persons WHERE key=?", (person_key,)).fetchone()
    return "" if row is None else str(row[0])


def daily_days_for(
    db: Db, person_keys: list[str]
) -> dict[str, tuple[list[date], date | None]]:
    """For each person: the local dates of their correct daily answers, and the newest daily
    question in the chats where they answered one. One query over daily answers only
    (answers_daily), for every row of a board at once."""
    days: dict[str, set[str]] = {key: set() for key in person_keys}
    latest: dict[str, str] = {}
    rows = db.execute(
        "SELECT a.person_key, a.daily_date, a.correct,"
        " (SELECT MAX(d.local_date) FROM daily_posts AS d WHERE d.chat_key = a.chat_key)"
        " FROM answers AS a INDEXED BY answers_daily"
        " WHERE a.person_key IN (SELECT value FROM json_each(?))"
        " AND a.daily_date IS NOT NULL",
        (json.dumps(person_keys),),
    )
    for person, day, correct, newest in rows:
        if correct:
            days[person].add(day)
        if newest is not None and newest > latest.get(person, ""):
            latest[person] = newest
    return {
        key: (
            sorted(date.fromisoformat(d) for d in days[key]),
            date.fromisoformat(latest[key]) if key in latest else None,
        )
        for key in person_keys
    }


def person_streaks(db: Db, person_key: str) -> tuple[int, int]:
    row = db.execute(
        "SELECT current_streak, best_streak FROM streaks WHERE person_key=?"
        if aggregates_file.streaks_apart(db) else
        "SELECT current_streak, best_streak FROM persons WHERE key=?", (person_key,)
    ).fetchone()
    return (row[0], row[1]) if row else (0, 0)
