"""Leaderboards and personal stats: reads of the aggregate tables (reader thread)."""

from __future__ import annotations

import sqlite3
from typing import Any

from bot.core.ports import ScoreRow
from bot.storage.reader import snapshot

Db = sqlite3.Connection


def leaderboard(
    db: Db, chat: str, since_day: str | None, limit: int, person_key: str | None
) -> tuple[list[ScoreRow], ScoreRow | None]:
    if since_day is None:
        # all time: totals is indexed in rank order
        source = "SELECT person_key, correct, answered, time_ms FROM totals WHERE chat_key=?"
        params: tuple[Any, ...] = (chat,)
    else:
        params = (chat, since_day)
        source = (
            "SELECT person_key, SUM(correct) AS correct, SUM(answered) AS answered,"
            " SUM(time_ms) AS time_ms FROM scores WHERE chat_key=? AND day>=?"
            " GROUP BY person_key"
        )
    with snapshot(db):
        rows = db.execute(
            f"WITH board AS ({source}) SELECT board.person_key, COALESCE(persons.name, ''),"
            " correct, answered, time_ms "
            "FROM board LEFT JOIN persons ON persons.key = board.person_key "
            "ORDER BY correct DESC, time_ms ASC, board.person_key LIMIT ?",
            (*params, limit),
        ).fetchall()
        top = [ScoreRow(r[0], r[1], r[2], r[3], r[4], i) for i, r in enumerate(rows, start=1)]
        me = next((row for row in top if row.person_key == person_key), None)
        if me is None and person_key is not None:
            row = db.execute(
                f"WITH board AS ({source}), mine AS (SELECT * FROM board WHERE person_key=?) "
                "SELECT mine.person_key, COALESCE(persons.name, ''), mine.correct,"
                " mine.answered, mine.time_ms,"
                " (SELECT COUNT(*) FROM board WHERE board.correct > mine.correct OR"
                "  (board.correct = mine.correct AND (board.time_ms < mine.time_ms OR"
                "   (board.time_ms = mine.time_ms AND board.person_key < mine.person_key))))"
                "FROM mine LEFT JOIN persons ON persons.key = mine.person_key",
                (*params, person_key),
            ).fetchone()
            if row is not None:
                me = ScoreRow(row[0], row[1], row[2], row[3], row[4], row[5] + 1)
    return top, me


def person_streaks(db: Db, person_key: str) -> tuple[int, int]:
    row = db.execute(
        "SELECT current_streak, best_streak FROM persons WHERE key=?", (person_key,)
    ).fetchone()
    return (row[0], row[1]) if row else (0, 0)
