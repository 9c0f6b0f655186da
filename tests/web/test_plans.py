"""What the dashboard's reads cost, asserted on SQLite's query plans rather than timed: each
statement searches an index range (no SCAN of a table, no sort of a whole chat before its
LIMIT), so a page costs the same in a chat of ten people and of 100,000."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.storage import SqliteStorage, cards, day_runs, item_figures, queries, review
from bot.storage import dashboard as reads
from bot.storage.sql import Row
from bot.storage.sqlite.sql import SqliteSql, numbered

AT = datetime(2026, 3, 1, tzinfo=UTC)


class Planned(SqliteSql):
    """Runs each statement as SQLite would, and keeps its query plan."""

    def __init__(self, db: sqlite3.Connection) -> None:
        super().__init__(db)
        self.plans: list[tuple[str, list[str]]] = []

    def _plan(self, sql: str, args: tuple[Any, ...]) -> None:
        steps = [r[3] for r in self.db.execute(f"EXPLAIN QUERY PLAN {numbered(sql)}", args)]
        self.plans.append((sql, steps))

    async def rows(self, sql: str, *args: Any) -> list[Row]:
        self._plan(sql, args)
        return await super().rows(sql, *args)

    async def row(self, sql: str, *args: Any) -> Row | None:
        self._plan(sql, args)
        return await super().row(sql, *args)

    async def value(self, sql: str, *args: Any) -> Any:
        self._plan(sql, args)
        return await super().value(sql, *args)


@contextmanager
def planned(path: Path) -> Iterator[Planned]:
    with sqlite3.connect(path) as db:
        yield Planned(db)


@pytest.fixture
async def path(tmp_path: Path) -> Path:
    async with SqliteStorage(tmp_path / "quiz.db"):  # the schema, every migration applied
        pass
    return tmp_path / "quiz.db"


CALLS = [
    (reads.generation, ("tg:-1",)),
    (reads.chat_totals, ("tg:-1",)),
    (reads.chat_days, ("tg:-1", date(2026, 2, 1))),
    (reads.chat_people, ("tg:-1", None, 51)),
    (reads.chat_people, ("tg:-1", (3, 1200, "tg:9"), 51)),
    (reads.people_activity, ("tg:-1", ["tg:1", "tg:2"])),
    (reads.chat_answers, ("tg:-1", None, 1000, None)),
    (reads.chat_answers, ("tg:-1", ("tg:5", AT, 77), 1000, None)),
    (reads.chat_answers, ("tg:-1", None, 51, "tg:5")),  # a person's newest, backwards
    (reads.chat_answers, ("tg:-1", ("tg:5", AT, 77), 51, "tg:5")),
    (reads.board_people, ("tg:-1", date(2026, 2, 1), None, 1000)),
    (reads.board_people, ("tg:-1", date(2026, 2, 1), (3, 1200, "tg:9"), 1000)),
    (day_runs.streaks, ("tg:-1",)),
    (item_figures.item_quizzes, ("tg:-1",)),
    (item_figures.item_figures, ("tg:-1", None)),
    (item_figures.item_figures, ("tg:-1", "sample")),
    (queries.shown_orders, ("tg:-1", None)),
    (reads.open_reports, ("tg:-1", None, 51)),
    (reads.open_reports, ("tg:-1", 7, 51)),
    (reads.open_report_count, ("tg:-1",)),
    (reads.open_reports_per_question, ("tg:-1", "sample")),
    (cards.person_cards, ("tg:5",)),
    (cards.chat_cards, ("tg:-1", date(2026, 3, 1))),
    (review.recent_answers, ("tg:5", 50)),
]


@pytest.mark.parametrize(("read", "args"), CALLS, ids=lambda v: getattr(v, "__name__", ""))
async def test_every_dashboard_read_searches_an_index(
    path: Path, read: Any, args: tuple[Any, ...]
) -> None:
    with planned(path) as db:
        await read(db, *args)
    assert db.plans
    for sql, steps in db.plans:
        scans = [s for s in steps if s.startswith("SCAN")]
        assert not scans, (sql, steps)
        if "LIMIT" in sql or read is cards.person_cards:  # a page (a person's cards) is
            # read in index order, not sorted after reading all
            assert not [s for s in steps if "TEMP B-TREE FOR ORDER BY" in s], (sql, steps)
        assert any("INDEX" in s or "PRIMARY KEY" in s for s in steps), (sql, steps)
        if any(isinstance(a, tuple) for a in args) and "chat_key" in sql:  # a later page
            # seeks past its cursor
            first = steps[0]
            assert "(chat_key=?)" not in first and "(chat_key=? AND" in first, (sql, steps)


async def test_the_people_pages_day_streaks_are_read_by_key(path: Path) -> None:
    """day_runs.current_runs reads the runs only once the chat has a daily question."""
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA foreign_keys = OFF")
        raw.execute("INSERT INTO daily_posts VALUES ('tg:-1', '2026-03-01', 1, 0, NULL)")
    with planned(path) as db:
        assert await day_runs.current_runs(db, "tg:-1", ["tg:1", "tg:2"]) == {}
    [(_, newest), (sql, steps)] = db.plans
    assert "day_runs" in sql and not [s for s in newest + steps if s.startswith("SCAN")]
    assert steps == ["SEARCH day_runs USING PRIMARY KEY (chat_key=? AND person_key=?)"], steps
