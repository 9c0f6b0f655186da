"""Sql: a database connection as the operations written once see them (queries.py, ops.py,
rounds.py, review.py, drafts.py, problem_reports.py, records.py). Each database backend
implements it over its own connection: sqlite/sql.py, postgres/sql.py.

Statements are written with PostgreSQL's numbered placeholders ($1, $2, ...; SQLite reads them
as ?1, ?2) in the SQL both databases understand (upserts with ON CONFLICT, RETURNING). What the
two store differently (times, days, lists) goes through the conversions here; the few places
where their SQL differs are named here too (row locks, advisory locks, cache notifications).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any, Protocol

Row = Sequence[Any]  # a sqlite3 row tuple or an asyncpg.Record, read by position


class Sql(Protocol):
    for_update: str  # " FOR UPDATE" where rows are locked to order processes, else ""

    async def rows(self, sql: str, *args: Any) -> list[Row]: ...
    async def row(self, sql: str, *args: Any) -> Row | None: ...
    async def value(self, sql: str, *args: Any) -> Any:
        """The first column of the first row; None if there is none."""
        ...
    async def run(self, sql: str, *args: Any) -> int:
        """Run a statement; how many rows it changed."""
        ...
    async def lock(self, name: str) -> None:
        """Take `name` until the transaction ends, against every process on the database
        (nothing where one writer at a time is the rule: SQLite)."""
        ...
    async def notify(self, what: str, key: object) -> None:
        """Tell the other processes on the database that a cached `what` changed (nothing
        where they do not listen: SQLite)."""
        ...
    async def upsert(self, table: str, columns: str, rows: Sequence[Sequence[Any]], key: str,
                     update: str) -> None:
        """Insert `rows` into `table`; a row whose `key` is there already is updated by
        `update` (ON CONFLICT (key) DO UPDATE SET update). `columns`: each column with its
        PostgreSQL type ("chat_key text, day date"). One statement, the same text whatever the
        number of rows: PostgreSQL prepares it once (a multi-row VALUES list would be a new
        statement to prepare, a round trip, for each number of rows)."""
        ...
    async def breathe(self) -> None:
        """Let the event loop run others between slices of long Python work (PostgreSQL:
        the materializer shares the loop with the answers; SQLite's runs in the writer
        thread: nothing)."""
        ...

    # values in, as the database stores them
    def when(self, moment: datetime) -> Any: ...
    def day(self, day: date) -> Any: ...
    def array(self, values: Sequence[int] | Sequence[str]) -> Any: ...

    # values out
    def at(self, stored: Any) -> datetime:
        """An aware UTC datetime."""
        ...
    def on(self, stored: Any) -> date: ...
    def ints(self, stored: Any) -> tuple[int, ...]: ...
    def strs(self, stored: Any) -> tuple[str, ...]: ...


def at_or_none(db: Sql, stored: Any) -> datetime | None:
    return None if stored is None else db.at(stored)


def typed_columns(columns: str) -> tuple[list[str], list[str]]:
    """("chat_key text, day date") -> (["chat_key", "day"], ["text", "date"])."""
    pairs = [c.strip().split(maxsplit=1) for c in columns.split(",")]
    return [name for name, _ in pairs], [kind for _, kind in pairs]
