"""The two stores as the contract tests see them: a database (a SQLite file, or a fresh
PostgreSQL database), storages opened on it (each one is another process), and raw reads of
its tables for the checks (what another connection sees, the aggregates against a recount)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg

from bot.core.ports import ItemFigures, ReviewAnswer
from bot.storage import SqliteStorage, rank_buckets
from bot.storage.cards import COLUMNS as CARD_COLUMNS
from bot.storage.cards import Kept, step
from bot.storage.day_runs import Run, continued
from bot.storage.item_figures import figures_of
from bot.storage.postgres.materializer import Materializer as PgMaterializer
from bot.storage.postgres.storage import PostgresStorage
from bot.storage.sqlite.materializer import Materializer as SqliteMaterializer
from bot.storage.sqlite.sql import to_ms
from tests.database_copies import postgres_database, sqlite_copy

Store = SqliteStorage | PostgresStorage
Rows = list[tuple[Any, ...]]

# answers in the order the materializer applies them, with their UTC day
SQLITE_ANSWERS = (
    "SELECT chat_key, person_key, correct, elapsed_ms, date(answered_at / 1000, 'unixepoch')"
    " FROM answers ORDER BY id"
)
PG_ANSWERS = (
    "SELECT chat_key, person_key, correct::int, elapsed_ms,"
    " to_char((answered_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') FROM answers"
    " ORDER BY tx, id"
)



def rank_rows(day: str = "day") -> str:
    """Every board row as (board, chat, day, correct, time_ms), for rank_groups."""
    return (
        "SELECT 'all', chat_key, '', correct, time_ms FROM totals UNION ALL"
        " SELECT 'week', chat_key, '', correct, time_ms FROM week_scores UNION ALL"
        f" SELECT 'day', chat_key, {day}, correct, time_ms FROM scores"
    )


def rank_groups(rows: Rows) -> Rows:
    """What rank_counts should hold: (board, chat, day, correct, time bucket, people) of the
    board rows, the bucket of each row's time in Python."""
    counted = Counter((b, chat, day, int(correct), rank_buckets.bucket(int(time_ms)))
                      for b, chat, day, correct, time_ms in rows)
    return sorted((*key, people) for key, people in counted.items())

class Backend:
    name: str
    database: str  # what QUIZBOT_DATABASE would say

    async def check_aggregates(self) -> None:
        """The stored aggregates equal a recount from the answers alone, and the boards'
        rank counts and the dashboard's figures a count of their rows."""
        assert await self.stored() == await self.recount()
        await self.check_rank_counts()
        await self.check_figures()
        await self.check_item_figures()
        await self.check_day_runs()
        await self.check_cards()

    async def check_rank_counts(self) -> None:
        """rank_counts holds, for every board, how many people have each number of correct
        answers and time bucket (rows emptied to 0 may stay)."""
        day = "day" if self.name == "sqlite" else "to_char(day, 'YYYY-MM-DD')"
        none = "''" if self.name == "sqlite" else "'-infinity'"
        kept = sorted(await self.fetch(
            f"SELECT board, chat_key, CASE WHEN day = {none} THEN '' ELSE {day} END, correct,"
            " bucket, people FROM rank_counts WHERE people != 0"
        ))
        assert [tuple(r) for r in kept] == rank_groups(await self.fetch(rank_rows(day)))

    async def check_figures(self) -> None:
        """The dashboard's figures hold, for every chat (and day), the people, answers and
        right answers of its totals (and scores) rows (rows emptied to 0 may stay)."""
        day = "day" if self.name == "sqlite" else "to_char(day, 'YYYY-MM-DD')"
        kept = sorted(await self.fetch(
            "SELECT chat_key, '', people, answered, correct FROM chat_figures"
            " WHERE people != 0 OR answered != 0 OR correct != 0 UNION ALL"
            f" SELECT chat_key, {day}, people, answered, correct FROM chat_day_figures"
            " WHERE people != 0 OR answered != 0 OR correct != 0"
        ))
        counted = sorted(await self.fetch(
            "SELECT chat_key, '', count(*), sum(answered), sum(correct) FROM totals"
            f" GROUP BY chat_key UNION ALL SELECT chat_key, {day}, count(*), sum(answered),"
            f" sum(correct) FROM scores GROUP BY chat_key, {day}"
        ))
        assert [tuple(int(v) if i > 1 else v for i, v in enumerate(r)) for r in kept] == [
            tuple(int(v) if i > 1 else v for i, v in enumerate(r)) for r in counted]

    async def check_item_figures(self) -> None:
        """The dashboard's item figures of every chat are those of the first answers, in
        the order the materializer applies them (rows emptied to 0 may stay)."""
        order = "id" if self.name == "sqlite" else "tx, id"
        firsts: dict[tuple[str, str, str, str],
                     tuple[str, str, str, int, bool, str | None]] = {}
        for chat, quiz, question, person, option, correct, response in await self.fetch(
            "SELECT chat_key, quiz_id, question_id, person_key, option, correct, response"
            f" FROM answers ORDER BY {order}"
        ):
            firsts.setdefault((chat, quiz, question, person),
                              (quiz, question, person, int(option), bool(correct), response))
        expected: dict[str, ItemFigures] = {}
        for chat in {key[0] for key in firsts}:
            expected[chat] = figures_of(v for k, v in firsts.items() if k[0] == chat)
        options = await self.fetch(
            "SELECT chat_key, quiz_id, question_id, option, people FROM item_options"
            " WHERE people != 0")
        groups = await self.fetch(
            "SELECT chat_key, quiz_id, question_id, answered, correct, item_right, people"
            " FROM item_groups WHERE people != 0")
        assert sorted((r[0], r[1], r[2], int(r[3]), int(r[4])) for r in options) == sorted(
            (chat, *o) for chat, f in expected.items() for o in f.options)
        assert sorted((r[0], r[1], r[2], *(int(v) for v in r[3:])) for r in groups) == sorted(
            (chat, g.quiz_id, g.question_id, g.answered, g.correct, g.right, g.people)
            for chat, f in expected.items() for g in f.groups)
        responses = await self.fetch(
            "SELECT chat_key, quiz_id, question_id, response, people FROM item_responses"
            " WHERE people != 0")
        assert sorted((r[0], r[1], r[2], r[3], int(r[4])) for r in responses) == sorted(
            (chat, *r) for chat, f in expected.items() for r in f.responses)

    async def check_day_runs(self) -> None:
        """day_runs holds each person's run of daily questions answered right in each chat,
        continued in the order the materializer applies the answers."""
        order = "id" if self.name == "sqlite" else "tx, id"
        runs: dict[tuple[str, str], Run] = {}
        for chat, person, day in await self.fetch(
            "SELECT chat_key, person_key, daily_date FROM answers"
            f" WHERE daily_date IS NOT NULL AND correct ORDER BY {order}"
        ):
            runs[(chat, person)] = continued(runs.get((chat, person)), date.fromisoformat(
                day) if isinstance(day, str) else day)
        kept = {(r[0], r[1]): (date.fromisoformat(r[2]) if isinstance(r[2], str) else r[2],
                               int(r[3]), int(r[4]))
                for r in await self.fetch(
                    "SELECT chat_key, person_key, last_day, run, best FROM day_runs")}
        assert kept == runs

    async def check_cards(self) -> None:
        """cards holds each person's card per question as their answers replayed in
        (answered_at, id) order give it (bot/core/deck.py, /review's rules), in the chat of
        its last answer; card_days counts them per chat and UTC due day; nobody is left
        pending."""
        expected: dict[tuple[str, str, str], Kept] = {}
        for person, quiz, question, chat, correct, at, elapsed, personal in await self.fetch(
            "SELECT a.person_key, a.quiz_id, a.question_id, a.chat_key, a.correct,"
            " a.answered_at, a.elapsed_ms, p.owner_key IS NOT NULL FROM answers AS a"
            " JOIN posts AS p ON p.id = a.post_id ORDER BY a.answered_at, a.id"
        ):
            when = at if isinstance(at, datetime) else datetime.fromtimestamp(at / 1000, UTC)
            key = (person, quiz, question)
            expected[key] = step(expected.get(key), chat, ReviewAnswer(
                quiz, question, bool(correct), when, int(elapsed), bool(personal)))

        def ms(at: Any) -> int:
            return int(at) if isinstance(at, int) else to_ms(at)

        kept = {(r[0], r[1], r[2]): (r[3], ms(r[4]), r[5], r[6], int(r[7]), r[8], ms(r[9]),
                                     int(r[10]), int(r[11]))
                for r in await self.fetch(f"SELECT {CARD_COLUMNS} FROM cards")}
        assert kept == {key: (k.chat_key, to_ms(k.card.due), k.card.stability,
                              k.card.difficulty, int(k.card.state), k.card.step,
                              to_ms(k.card.last_review or k.card.due), k.reps, k.lapses)
                        for key, k in expected.items()}
        days = Counter((k.chat_key, k.day.isoformat()) for k in expected.values())
        assert {(r[0], r[1] if isinstance(r[1], str) else r[1].isoformat()): int(r[2])
                for r in await self.fetch("SELECT chat_key, day, cards FROM card_days")
                } == dict(days)
        assert await self.count("cards_pending") == 0

    def store(self, **options: Any) -> Store:
        """A storage on this database, not opened (another process, if one is open)."""
        raise NotImplementedError

    @asynccontextmanager
    async def opened(self, **options: Any) -> AsyncIterator[Store]:
        store = self.store(**options)
        await store.open()
        try:
            yield store
        finally:
            await store.close()

    def materializer(self, **options: Any) -> Any:
        raise NotImplementedError

    async def fetch(self, sql: str, *args: Any) -> Rows:
        """Rows of a query on a connection of its own (another process's view)."""
        raise NotImplementedError

    async def scalar(self, sql: str, *args: Any) -> Any:
        rows = await self.fetch(sql, *args)
        return rows[0][0] if rows else None

    async def count(self, table: str) -> int:
        return int(await self.scalar(f"SELECT count(*) FROM {table}"))

    async def answers_in_order(self) -> Rows:
        raise NotImplementedError

    async def week_until(self) -> str | None:
        raise NotImplementedError

    async def stored(self) -> dict[str, Rows]:
        """The aggregates as stored (days as YYYY-MM-DD, flags as 0/1)."""
        raise NotImplementedError

    async def unapplied(self) -> int:
        raise NotImplementedError

    async def recount(self) -> dict[str, Rows]:
        """What the aggregates must hold, computed from the answers alone."""
        scores: dict[tuple[str, str, str], list[int]] = {}
        totals: dict[tuple[str, str], list[int]] = {}
        streaks: dict[str, tuple[int, int]] = {}
        rows = await self.answers_in_order()
        for chat, person, correct, elapsed, day in rows:
            for key in ((chat, day, person), ("*", day, person)):
                acc = scores.setdefault(key, [0, 0, 0])
                acc[0] += int(correct)
                acc[1] += 1
                acc[2] += elapsed
            for pair in ((chat, person), ("*", person)):
                acc = totals.setdefault(pair, [0, 0, 0])
                acc[0] += int(correct)
                acc[1] += 1
                acc[2] += elapsed
            current, best = streaks.get(person, (0, 0))
            current = current + 1 if correct else 0
            streaks[person] = (current, max(best, current))
        until = await self.week_until()
        week: dict[tuple[str, str], list[int]] = {}
        if until is not None:
            first = (date.fromisoformat(until) - timedelta(days=6)).isoformat()
            for (chat, day, person), values in scores.items():
                if first <= day <= until:
                    acc = week.setdefault((chat, person), [0, 0, 0])
                    for i in range(3):
                        acc[i] += values[i]
        people = await self.people_with_streaks()
        return {
            "week": sorted((*k, *v) for k, v in week.items()),
            "scores": sorted((*k, *v) for k, v in scores.items()),
            "totals": sorted((*k, *v) for k, v in totals.items()),
            "streaks": sorted((k, *streaks.get(k, (0, 0))) for k in people),
        }

    async def people_with_streaks(self) -> list[str]:
        raise NotImplementedError


class SqliteBackend(Backend):
    name = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.database = str(path)

    def store(self, **options: Any) -> Store:
        return SqliteStorage(self.path, **options)

    def materializer(self, **options: Any) -> SqliteMaterializer:
        options.pop("wait_limit", None)
        options.pop("close_wait", None)
        return SqliteMaterializer(**options)

    async def fetch(self, sql: str, *args: Any) -> Rows:
        sql = _qmarks(sql)
        with sqlite3.connect(self.path, timeout=10) as db:
            return [tuple(r) for r in db.execute(sql, args).fetchall()]

    async def answers_in_order(self) -> Rows:
        return await self.fetch(SQLITE_ANSWERS)

    async def week_until(self) -> str | None:
        value = await self.scalar("SELECT until FROM week_window")
        return None if value is None else str(value)

    async def people_with_streaks(self) -> list[str]:
        return [r[0] for r in await self.fetch("SELECT key FROM persons")]

    async def stored(self) -> dict[str, Rows]:
        return {
            "week": sorted(await self.fetch(
                "SELECT chat_key, person_key, correct, answered, time_ms FROM week_scores")),
            "scores": sorted(await self.fetch(
                "SELECT chat_key, day, person_key, correct, answered, time_ms FROM scores")),
            "totals": sorted(await self.fetch(
                "SELECT chat_key, person_key, correct, answered, time_ms FROM totals")),
            "streaks": sorted(await self.fetch(
                "SELECT key, current_streak, best_streak FROM persons")),
        }

    async def unapplied(self) -> int:
        top = await self.scalar("SELECT COALESCE(MAX(id), 0) FROM answers")
        at = await self.scalar("SELECT position FROM materialized")
        return int(top - at)


class PostgresBackend(Backend):
    name = "postgres"

    def __init__(self, url: str) -> None:
        self.url = url
        self.database = url

    def store(self, **options: Any) -> Store:
        return PostgresStorage(self.url, **options)

    def materializer(self, **options: Any) -> PgMaterializer:
        # the server's oldest running transaction, in any database, holds answers back
        # (materializer.py): other tests' on a busy server can outlast the 2 s a close waits
        options.setdefault("close_wait", 60.0)
        return PgMaterializer(**options)

    async def fetch(self, sql: str, *args: Any) -> Rows:
        db = await asyncpg.connect(self.url)
        try:
            return [tuple(r) for r in await db.fetch(sql, *args)]
        finally:
            await db.close()

    async def answers_in_order(self) -> Rows:
        return await self.fetch(PG_ANSWERS)

    async def week_until(self) -> str | None:
        value = await self.scalar("SELECT until FROM week_window")
        return None if value is None else value.isoformat()

    async def people_with_streaks(self) -> list[str]:
        return [r[0] for r in await self.fetch("SELECT key FROM persons")]

    async def stored(self) -> dict[str, Rows]:
        people = await self.people_with_streaks()
        streaks = {
            r[0]: (r[1], r[2]) for r in await self.fetch(
                "SELECT person_key, current_streak, best_streak FROM streaks")
        }
        return {
            "week": sorted(await self.fetch(
                "SELECT chat_key, person_key, correct, answered, time_ms FROM week_scores")),
            "scores": sorted(await self.fetch(
                "SELECT chat_key, to_char(day, 'YYYY-MM-DD'), person_key, correct, answered,"
                " time_ms FROM scores")),
            "totals": sorted(await self.fetch(
                "SELECT chat_key, person_key, correct, answered, time_ms FROM totals")),
            "streaks": sorted((k, *streaks.get(k, (0, 0))) for k in people),
        }

    async def unapplied(self) -> int:
        return int(await self.scalar(
            "SELECT count(*) FROM answers AS a, materialized AS m"
            " WHERE (a.tx, a.id) > (m.tx, m.id)"
        ))


def _qmarks(sql: str) -> str:
    """`$1`-style placeholders (PostgreSQL's) as SQLite's `?`, so a check is written once."""
    import re

    return re.sub(r"\$\d+", "?", sql)


@asynccontextmanager
async def backend_for(name: str, tmp_path: Path, migrated: bool = False
                      ) -> AsyncIterator[Backend]:
    """A database of its own: empty (no file yet, on SQLite), or, `migrated`, a copy of
    what opening an empty one leaves (tests/database_copies.py)."""
    if name == "sqlite":
        yield SqliteBackend(await sqlite_copy(tmp_path) if migrated else tmp_path / "quiz.db")
    else:
        async with postgres_database(migrated) as url:
            yield PostgresBackend(url)
