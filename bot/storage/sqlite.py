"""SQLite storage through aiosqlite: WAL, synchronous=FULL, migrations, group commit.

Writes go through one writer connection and are grouped: concurrent writes share a transaction
and one fsync, and each caller's future resolves only after COMMIT returned, so nothing is
acknowledged before it is durable. Each write runs inside its own SAVEPOINT, so one failing
write does not undo its neighbours. Reads use a second connection and never see uncommitted
rows.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from bot.core.ports import (
    AnswerRecord,
    NewPost,
    PostRecord,
    RecordOutcome,
    RunRecord,
    ScoreRow,
    StorageError,
)
from bot.core.schedule import Schedule
from bot.storage.lru import Lru
from bot.storage.migrations import MIGRATIONS

log = logging.getLogger(__name__)
T = TypeVar("T")
POST_CACHE = 4096  # posts: a few thousand live questions at once
PEOPLE_CACHE = 50_000  # about 5 MB at most
CHAT_CACHE = 10_000
WriteOp = Callable[[aiosqlite.Connection], Awaitable[Any]]

APPLICATION_ID = 0x5155495A  # "QUIZ": marks the file as quizbot's (PRAGMA application_id)

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=FULL",  # an acknowledged answer survives power loss, not just a crash
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=10000",  # another process (a second bot) may hold the write lock
)


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    return text


def to_ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def from_ms(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


def _post(row: aiosqlite.Row) -> PostRecord:
    return PostRecord(
        id=row["id"],
        chat_key=row["chat_key"],
        quiz_id=row["quiz_id"],
        question_id=row["question_id"],
        order=tuple(json.loads(row["option_order"])),
        locale=row["locale"],
        created_at=from_ms(row["created_at"]),  # type: ignore[arg-type]
        closes_at=from_ms(row["closes_at"]),
        closed_at=from_ms(row["closed_at"]),
        run_id=row["run_id"],
        kind=row["kind"],
        owner_key=row["owner_key"],
    )


def _answer(row: aiosqlite.Row) -> AnswerRecord:
    return AnswerRecord(
        post_id=row["post_id"],
        person_key=row["person_key"],
        option=row["option"],
        correct=bool(row["correct"]),
        answered_at=from_ms(row["answered_at"]),  # type: ignore[arg-type]
        elapsed_ms=row["elapsed_ms"],
        name=row["name"] if "name" in row.keys() else "",
    )


def _run(row: aiosqlite.Row) -> RunRecord:
    return RunRecord(
        id=row["id"],
        person_key=row["person_key"],
        chat_key=row["chat_key"],
        quiz_id=row["quiz_id"],
        questions=tuple(json.loads(row["questions"])),
        locale=row["locale"],
        started_at=from_ms(row["started_at"]),  # type: ignore[arg-type]
        finished_at=from_ms(row["finished_at"]),
    )


class SqliteStorage:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._w: aiosqlite.Connection | None = None
        self._r: aiosqlite.Connection | None = None
        self._pending: list[tuple[WriteOp, asyncio.Future[Any]]] = []
        self._wake = asyncio.Event()
        self._writer_task: asyncio.Task[None] | None = None
        self._closing = False
        # Caches, each bounded (LRU): people and chats recently seen unchanged, to skip
        # redundant upserts; recently used posts, read on every answer.
        self._known_people: Lru[str, str] = Lru(PEOPLE_CACHE)  # key -> name
        self._known_chats: Lru[str, tuple[str, str | None]] = Lru(CHAT_CACHE)
        self._posts: Lru[int, PostRecord] = Lru(POST_CACHE)

    # lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        """Open (creating it if needed) and migrate; StorageError with one line naming the
        file if it cannot be used. Nothing is left open after a failure."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._w = await aiosqlite.connect(self.path, isolation_level=None)
            await self._check_ours(self._w)  # before anything writes to the file
            for pragma in PRAGMAS:
                await self._w.execute(pragma)
            await self._migrate(self._w)
            self._r = await aiosqlite.connect(self.path, isolation_level=None)
            for pragma in PRAGMAS[1:]:
                await self._r.execute(pragma)
        except BaseException as exc:
            await self._close_connections()
            if isinstance(exc, StorageError):
                raise
            if isinstance(exc, OSError | sqlite3.Error):
                raise StorageError(f"cannot use the database {self.path}: {_reason(exc)}") \
                    from exc
            raise
        self._r.row_factory = aiosqlite.Row
        self._w.row_factory = aiosqlite.Row
        self._closing = False
        self._writer_task = asyncio.create_task(self._writer(), name="sqlite-writer")

    async def _check_ours(self, db: aiosqlite.Connection) -> None:
        """Refuse a file some other program owns, or one a newer quizbot wrote: never add
        tables to it or change its journal mode."""
        async def value(sql: str) -> int:
            async with db.execute(sql) as cur:
                row = await cur.fetchone()
            return int(row[0]) if row else 0

        app_id = await value("PRAGMA application_id")
        version = await value("PRAGMA user_version")
        tables = await value("SELECT count(*) FROM sqlite_master")
        ours = app_id == APPLICATION_ID or (
            # created before the mark existed: our tables at a version we know of
            app_id == 0 and version > 0 and await value(
                "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN "
                "('posts', 'answers', 'persons')"
            ) == 3
        )
        if not ours and (app_id != 0 or tables):
            raise StorageError(
                f"{self.path} is not a quizbot database (it holds another program's data); "
                "set QUIZBOT_DATABASE to another file"
            )
        if version > len(MIGRATIONS):
            raise StorageError(
                f"{self.path} was written by a newer quizbot (schema {version}; this version "
                f"knows up to {len(MIGRATIONS)}): upgrade quizbot or use a backup"
            )

    async def close(self) -> None:
        if self._writer_task:
            self._closing = True  # the writer drains what is queued, then stops
            self._wake.set()
            await self._writer_task
            self._writer_task = None
        await self._close_connections()

    async def _close_connections(self) -> None:
        # an open aiosqlite connection is a thread that would keep the process alive
        for conn in (self._r, self._w):
            if conn is not None:
                await conn.close()
        self._r = self._w = None

    async def __aenter__(self) -> SqliteStorage:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _migrate(self, db: aiosqlite.Connection) -> None:
        await db.execute("BEGIN IMMEDIATE")  # one process migrates, others wait
        try:
            row = await (await db.execute("PRAGMA user_version")).fetchone()
            version = row[0] if row else 0
            await db.execute(f"PRAGMA application_id={APPLICATION_ID}")  # ours from now on
            for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
                log.info("applying schema migration %d", number)
                for statement in _split_sql(script):
                    await db.execute(statement)
                await db.execute(f"PRAGMA user_version={number}")
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise

    # the group-commit writer -----------------------------------------------------------
    async def _write(self, op: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        if self._writer_task is None or self._closing:
            raise RuntimeError("storage is not open")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.append((op, future))
        self._wake.set()
        return await future

    async def _writer(self) -> None:
        db = self._w
        assert db is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._pending = self._pending, []
            if not batch:
                if self._closing:
                    return
                continue
            for future, result, error in await self._commit(db, batch):
                if future.done():
                    continue
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(result)
            if self._closing:
                self._wake.set()  # one more pass to drain or stop

    async def _commit(
        self, db: aiosqlite.Connection, batch: list[tuple[WriteOp, asyncio.Future[Any]]]
    ) -> list[tuple[asyncio.Future[Any], Any, BaseException | None]]:
        """Run a batch of writes in one transaction; each op's result or its own error."""
        isolate = len(batch) > 1  # savepoints only matter when neighbours share the commit
        outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        try:
            await db.execute("BEGIN IMMEDIATE")
            for op, future in batch:
                if isolate:
                    await db.execute("SAVEPOINT op")
                try:
                    outcomes.append((future, await op(db), None))
                except Exception as exc:  # this write fails alone
                    await db.execute("ROLLBACK TO op" if isolate else "ROLLBACK")
                    outcomes.append((future, None, exc))
                if isolate:
                    await db.execute("RELEASE op")
            if db.in_transaction:
                await db.execute("COMMIT")
            return outcomes
        except Exception as exc:
            log.exception("write transaction failed; %d writes not committed", len(batch))
            if db.in_transaction:
                await db.execute("ROLLBACK")
            return [(future, None, exc) for _, future in batch]

    async def _fetchall(self, sql: str, params: tuple[Any, ...] = ()) -> list[aiosqlite.Row]:
        assert self._r is not None, "storage is not open"
        async with self._r.execute(sql, params) as cur:
            return list(await cur.fetchall())

    async def _fetchone(self, sql: str, params: tuple[Any, ...] = ()) -> aiosqlite.Row | None:
        assert self._r is not None, "storage is not open"
        async with self._r.execute(sql, params) as cur:
            return await cur.fetchone()

    # people and chats ------------------------------------------------------------------
    async def upsert_person(self, key: str, name: str) -> None:
        if self._known_people.get(key) == name:
            return  # the hot path: no I/O for a known, unchanged person
        row = await self._fetchone("SELECT name FROM persons WHERE key=?", (key,))
        if row is not None and row["name"] == name:
            self._known_people.put(key, name)
            return

        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                "INSERT INTO persons(key, name) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET name=excluded.name",
                (key, name),
            )

        await self._write(op)
        self._known_people.put(key, name)

    async def upsert_chat(self, key: str, title: str, platform_locale: str | None = None) -> None:
        known = (title, platform_locale)
        if self._known_chats.get(key) == known:
            return
        row = await self._fetchone("SELECT title, platform_locale FROM chats WHERE key=?", (key,))
        if row is not None and row["title"] == title and (
            platform_locale is None or row["platform_locale"] == platform_locale
        ):
            self._known_chats.put(key, known)
            return

        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                "INSERT INTO chats(key, title, platform_locale) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET title=excluded.title, "
                "platform_locale=COALESCE(excluded.platform_locale, platform_locale)",
                (key, title, platform_locale),
            )

        await self._write(op)
        self._known_chats.put(key, known)

    async def migrate_chat(self, old: str, new: str) -> bool:
        """Move everything of chat `old` to key `new` in one transaction (a Telegram group that
        became a supergroup gets a new id). Aggregates are added up if `new` has some."""

        async def op(db: aiosqlite.Connection) -> bool:
            async with db.execute("SELECT 1 FROM chats WHERE key=?", (old,)) as cur:
                if await cur.fetchone() is None:
                    return False
            await db.execute(
                "INSERT INTO chats(key, title, locale, platform_locale) SELECT ?, title, locale,"
                " platform_locale FROM chats WHERE key=? ON CONFLICT(key) DO UPDATE SET"
                " locale=COALESCE(chats.locale, excluded.locale)",
                (new, old),
            )
            for table in ("posts", "answers", "runs"):
                await db.execute(f"UPDATE {table} SET chat_key=? WHERE chat_key=?", (new, old))
            await db.execute(
                "UPDATE OR IGNORE schedules SET chat_key=? WHERE chat_key=?", (new, old)
            )
            await db.execute(
                "UPDATE OR IGNORE daily_posts SET chat_key=? WHERE chat_key=?", (new, old)
            )
            for table, key in (("scores", "day, person_key"), ("totals", "person_key")):
                columns = f"chat_key, {key}, correct, answered, time_ms"
                await db.execute(
                    f"INSERT INTO {table}({columns}) SELECT ?, {key}, correct, answered, time_ms"
                    f" FROM {table} WHERE chat_key=? ON CONFLICT DO UPDATE SET"
                    " correct=correct+excluded.correct, answered=answered+excluded.answered,"
                    " time_ms=time_ms+excluded.time_ms",
                    (new, old),
                )
            for table in ("scores", "totals", "schedules", "daily_posts", "chats"):
                key_column = "key" if table == "chats" else "chat_key"
                await db.execute(f"DELETE FROM {table} WHERE {key_column}=?", (old,))
            return True

        moved = await self._write(op)
        self._posts.clear()
        self._known_chats.pop(old)
        return moved

    async def set_person_locale(self, key: str, locale: str | None) -> None:
        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                "INSERT INTO persons(key, locale) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET locale=excluded.locale",
                (key, locale),
            )

        await self._write(op)

    async def person_locale(self, key: str) -> str | None:
        row = await self._fetchone("SELECT locale FROM persons WHERE key=?", (key,))
        return row["locale"] if row else None

    async def person_name(self, key: str) -> str | None:
        row = await self._fetchone("SELECT name FROM persons WHERE key=?", (key,))
        return row["name"] if row else None

    async def set_chat_locale(self, key: str, locale: str | None) -> None:
        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                "INSERT INTO chats(key, locale) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET locale=excluded.locale",
                (key, locale),
            )

        await self._write(op)

    async def chat_locale(self, key: str) -> str | None:
        row = await self._fetchone("SELECT locale FROM chats WHERE key=?", (key,))
        return row["locale"] if row else None

    async def chat_platform_locale(self, key: str) -> str | None:
        row = await self._fetchone("SELECT platform_locale FROM chats WHERE key=?", (key,))
        return row["platform_locale"] if row else None

    # posts -----------------------------------------------------------------------------
    async def create_post(
        self,
        chat_key: str,
        quiz_id: str,
        question_id: str,
        order: tuple[int, ...],
        locale: str,
        created_at: datetime,
        closes_at: datetime | None = None,
        run_id: int | None = None,
        kind: str = "quiz",
        owner_key: str | None = None,
    ) -> PostRecord:
        new = NewPost(chat_key, quiz_id, question_id, tuple(order), locale, created_at,
                      closes_at, run_id, kind, owner_key)

        async def op(db: aiosqlite.Connection) -> int:
            return await self._insert_post(db, new)

        post_id = await self._write(op)
        return await self.get_post(post_id)  # type: ignore[return-value]

    @staticmethod
    async def _insert_post(db: aiosqlite.Connection, new: NewPost) -> int:
        await db.execute("INSERT OR IGNORE INTO chats(key) VALUES (?)", (new.chat_key,))
        cur = await db.execute(
            "INSERT INTO posts(chat_key, quiz_id, question_id, option_order, locale, kind,"
            " run_id, created_at, closes_at, owner_key) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                new.chat_key, new.quiz_id, new.question_id, json.dumps(list(new.order)),
                new.locale, new.kind, new.run_id, to_ms(new.created_at),
                to_ms(new.closes_at) if new.closes_at else None, new.owner_key,
            ),
        )
        return cur.lastrowid  # type: ignore[return-value]

    async def get_post(self, post_id: int) -> PostRecord | None:
        # A cached post may miss a close made by another process; record_answer re-checks.
        if (post := self._posts.get(post_id)) is not None:
            return post
        row = await self._fetchone("SELECT * FROM posts WHERE id=?", (post_id,))
        if row is None:
            return None
        self._remember(post := _post(row))
        return post

    def _remember(self, post: PostRecord) -> None:
        self._posts.put(post.id, post)

    async def bind_ref(self, post_id: int, ref: str) -> None:
        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                "INSERT OR REPLACE INTO post_refs(ref, post_id) VALUES (?, ?)", (ref, post_id)
            )

        await self._write(op)

    async def post_by_ref(self, ref: str) -> PostRecord | None:
        row = await self._fetchone(
            "SELECT posts.* FROM post_refs JOIN posts ON posts.id = post_refs.post_id "
            "WHERE post_refs.ref=?",
            (ref,),
        )
        return _post(row) if row else None

    async def refs(self, post_id: int) -> tuple[str, ...]:
        rows = await self._fetchall(
            "SELECT ref FROM post_refs WHERE post_id=? ORDER BY ref", (post_id,)
        )
        return tuple(r["ref"] for r in rows)

    async def close_post(self, post_id: int, when: datetime, quiet: bool = False) -> bool:
        async def op(db: aiosqlite.Connection) -> bool:
            cur = await db.execute(
                "UPDATE posts SET closed_at=?, summary_posted_at=? "
                "WHERE id=? AND closed_at IS NULL",
                (to_ms(when), to_ms(when) if quiet else None, post_id),
            )
            return cur.rowcount == 1

        closed = await self._write(op)
        self._posts.pop(post_id)
        return closed

    async def mark_summary_posted(self, post_id: int, when: datetime) -> None:
        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                "UPDATE posts SET summary_posted_at=? WHERE id=? AND summary_posted_at IS NULL",
                (to_ms(when), post_id),
            )

        await self._write(op)

    async def unposted_summaries(
        self, closed_after: datetime, closed_before: datetime
    ) -> list[PostRecord]:
        rows = await self._fetchall(
            "SELECT * FROM posts WHERE closed_at IS NOT NULL AND summary_posted_at IS NULL"
            " AND closed_at>? AND closed_at<=? AND run_id IS NULL ORDER BY id",
            (to_ms(closed_after), to_ms(closed_before)),
        )
        return [_post(r) for r in rows]

    async def open_posts(
        self, chat_key: str | None = None, due_before: datetime | None = None,
        kind: str | None = None,
    ) -> list[PostRecord]:
        sql = "SELECT * FROM posts WHERE closed_at IS NULL"
        params: list[Any] = []
        if chat_key is not None:
            sql += " AND chat_key=?"
            params.append(chat_key)
        if due_before is not None:
            sql += " AND closes_at IS NOT NULL AND closes_at<=?"
            params.append(to_ms(due_before))
        if kind is not None:
            sql += " AND kind=?"
            params.append(kind)
        return [_post(r) for r in await self._fetchall(sql + " ORDER BY id", tuple(params))]

    async def posted_questions(
        self, chat_key: str, kind: str | None = None
    ) -> dict[tuple[str, str], int]:
        sql = "SELECT quiz_id, question_id, COUNT(*) AS n FROM posts WHERE chat_key=?"
        params: tuple[Any, ...] = (chat_key,)
        if kind is not None:
            sql += " AND kind=?"
            params = (chat_key, kind)
        rows = await self._fetchall(sql + " GROUP BY quiz_id, question_id", params)
        return {(r["quiz_id"], r["question_id"]): r["n"] for r in rows}

    # answers ---------------------------------------------------------------------------
    async def record_answer(
        self, answer: AnswerRecord
    ) -> tuple[RecordOutcome, AnswerRecord | None]:
        async def op(db: aiosqlite.Connection) -> tuple[RecordOutcome, AnswerRecord | None]:
            if answer.person_key not in self._known_people:
                await db.execute(
                    "INSERT OR IGNORE INTO persons(key) VALUES (?)", (answer.person_key,)
                )
            # The open check is part of the insert, so a post closed by another process
            # between our read and this write still refuses the answer.
            at = to_ms(answer.answered_at)
            cur = await db.execute(
                "INSERT INTO answers(post_id, person_key, option, correct, answered_at,"
                " elapsed_ms, chat_key, quiz_id, question_id)"
                " SELECT ?, ?, ?, ?, ?, ?, chat_key, quiz_id, question_id FROM posts"
                " WHERE id=? AND closed_at IS NULL AND (closes_at IS NULL OR closes_at>?)"
                " ON CONFLICT(post_id, person_key) DO NOTHING",
                (
                    answer.post_id, answer.person_key, answer.option, int(answer.correct),
                    at, answer.elapsed_ms, answer.post_id, at,
                ),
            )
            if cur.rowcount == 1:
                return "inserted", None
            async with db.execute(
                "SELECT * FROM answers WHERE post_id=? AND person_key=?",
                (answer.post_id, answer.person_key),
            ) as c:
                row = await c.fetchone()
            if row is not None:
                return "duplicate", _answer(row)
            async with db.execute("SELECT 1 FROM posts WHERE id=?", (answer.post_id,)) as c:
                if await c.fetchone() is None:
                    raise LookupError(f"post {answer.post_id} does not exist")
            return "closed", None

        return await self._write(op)

    async def answers_for_post(self, post_id: int) -> list[AnswerRecord]:
        rows = await self._fetchall(
            "SELECT answers.*, persons.name AS name FROM answers "
            "JOIN persons ON persons.key = answers.person_key "
            "WHERE post_id=? ORDER BY answered_at, elapsed_ms",
            (post_id,),
        )
        return [_answer(r) for r in rows]

    async def answer_count(self, post_id: int) -> int:
        row = await self._fetchone("SELECT COUNT(*) AS n FROM answers WHERE post_id=?", (post_id,))
        return row["n"] if row else 0

    async def answer_of(self, post_id: int, person_key: str) -> AnswerRecord | None:
        row = await self._fetchone(
            "SELECT * FROM answers WHERE post_id=? AND person_key=?", (post_id, person_key)
        )
        return _answer(row) if row else None

    async def person_history(self, person_key: str) -> dict[tuple[str, str], bool]:
        rows = await self._fetchall(
            "SELECT quiz_id, question_id, correct FROM answers WHERE person_key=? "
            "ORDER BY answered_at",
            (person_key,),
        )
        return {(r["quiz_id"], r["question_id"]): bool(r["correct"]) for r in rows}

    # quiz runs -------------------------------------------------------------------------
    async def create_run(
        self, person_key: str, chat_key: str, quiz_id: str, questions: tuple[str, ...],
        locale: str, started_at: datetime,
    ) -> RunRecord:
        async def op(db: aiosqlite.Connection) -> int:
            await db.execute("INSERT OR IGNORE INTO chats(key) VALUES (?)", (chat_key,))
            await db.execute("INSERT OR IGNORE INTO persons(key) VALUES (?)", (person_key,))
            cur = await db.execute(
                "INSERT INTO runs(person_key, chat_key, quiz_id, questions, locale, started_at)"
                " VALUES (?,?,?,?,?,?)",
                (person_key, chat_key, quiz_id, json.dumps(list(questions)), locale,
                 to_ms(started_at)),
            )
            return cur.lastrowid  # type: ignore[return-value]

        run_id = await self._write(op)
        run = await self.get_run(run_id)
        assert run is not None
        return run

    async def active_run(self, person_key: str, chat_key: str) -> RunRecord | None:
        row = await self._fetchone(
            "SELECT * FROM runs WHERE person_key=? AND chat_key=? AND finished_at IS NULL",
            (person_key, chat_key),
        )
        return _run(row) if row else None

    async def get_run(self, run_id: int) -> RunRecord | None:
        row = await self._fetchone("SELECT * FROM runs WHERE id=?", (run_id,))
        return _run(row) if row else None

    async def finish_run(self, run_id: int, when: datetime) -> None:
        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                "UPDATE runs SET finished_at=? WHERE id=? AND finished_at IS NULL",
                (to_ms(when), run_id),
            )

        await self._write(op)

    async def run_posts(self, run_id: int) -> list[PostRecord]:
        rows = await self._fetchall("SELECT * FROM posts WHERE run_id=? ORDER BY id", (run_id,))
        return [_post(r) for r in rows]

    # boards and stats ------------------------------------------------------------------
    async def leaderboard(
        self, chat_key: str | None, since: datetime | None, limit: int, person_key: str | None
    ) -> tuple[list[ScoreRow], ScoreRow | None]:
        chat = chat_key if chat_key is not None else "*"
        if since is None:
            # all time: totals is indexed in rank order
            source = "SELECT person_key, correct, answered, time_ms FROM totals WHERE chat_key=?"
            params: tuple[Any, ...] = (chat,)
        else:
            day = since.astimezone(UTC).date().isoformat()
            where = "chat_key=? AND day>=?"
            params = (chat, day)
            source = (
                "SELECT person_key, SUM(correct) AS correct, SUM(answered) AS answered,"
                f" SUM(time_ms) AS time_ms FROM scores WHERE {where} GROUP BY person_key"
            )
        rows = await self._fetchall(
            f"WITH board AS ({source}) SELECT board.*, COALESCE(persons.name, '') AS name "
            "FROM board LEFT JOIN persons ON persons.key = board.person_key "
            "ORDER BY correct DESC, time_ms ASC, person_key LIMIT ?",
            (*params, limit),
        )
        top = [
            ScoreRow(r["person_key"], r["name"], r["correct"], r["answered"], r["time_ms"], i)
            for i, r in enumerate(rows, start=1)
        ]
        me = next((row for row in top if row.person_key == person_key), None)
        if me is None and person_key is not None:
            row = await self._fetchone(
                f"WITH board AS ({source}), mine AS (SELECT * FROM board WHERE person_key=?) "
                "SELECT mine.*, COALESCE(persons.name, '') AS name, "
                " (SELECT COUNT(*) FROM board WHERE board.correct > mine.correct OR"
                "  (board.correct = mine.correct AND (board.time_ms < mine.time_ms OR"
                "   (board.time_ms = mine.time_ms AND board.person_key < mine.person_key))))"
                "  AS better "
                "FROM mine LEFT JOIN persons ON persons.key = mine.person_key",
                (*params, person_key),
            )
            if row is not None:
                me = ScoreRow(
                    row["person_key"], row["name"], row["correct"], row["answered"],
                    row["time_ms"], row["better"] + 1,
                )
        return top, me

    async def person_totals(self, person_key: str) -> dict[str, tuple[int, int]]:
        rows = await self._fetchall(
            "SELECT quiz_id, COUNT(*) AS answered, SUM(correct) AS correct FROM answers "
            "WHERE person_key=? GROUP BY quiz_id",
            (person_key,),
        )
        return {r["quiz_id"]: (r["answered"], r["correct"]) for r in rows}

    async def person_streaks(self, person_key: str) -> tuple[int, int]:
        row = await self._fetchone(
            "SELECT current_streak, best_streak FROM persons WHERE key=?", (person_key,)
        )
        return (row["current_streak"], row["best_streak"]) if row else (0, 0)

    # daily schedules ---------------------------------------------------------------------
    async def set_schedule(self, schedule: Schedule, updated_by: str | None = None) -> None:
        async def op(db: aiosqlite.Connection) -> None:
            await db.execute("INSERT OR IGNORE INTO chats(key) VALUES (?)", (schedule.chat_key,))
            await db.execute(
                "INSERT INTO schedules(chat_key, local_time, tz, selector, open_minutes,"
                " updated_at, updated_by) VALUES (?,?,?,?,?,?,?) ON CONFLICT(chat_key) DO UPDATE"
                " SET local_time=excluded.local_time, tz=excluded.tz,"
                " selector=excluded.selector, open_minutes=excluded.open_minutes,"
                " updated_at=excluded.updated_at, updated_by=excluded.updated_by",
                (
                    schedule.chat_key, schedule.at.strftime("%H:%M"), schedule.tz,
                    schedule.selector, schedule.open_minutes,
                    to_ms(schedule.updated_at or datetime.now(UTC)), updated_by,
                ),
            )

        await self._write(op)

    async def delete_schedule(self, chat_key: str) -> bool:
        async def op(db: aiosqlite.Connection) -> bool:
            cur = await db.execute("DELETE FROM schedules WHERE chat_key=?", (chat_key,))
            return cur.rowcount == 1

        return await self._write(op)

    async def get_schedule(self, chat_key: str) -> Schedule | None:
        row = await self._fetchone("SELECT * FROM schedules WHERE chat_key=?", (chat_key,))
        return _schedule(row) if row else None

    async def schedules(self) -> list[Schedule]:
        return [_schedule(r) for r in await self._fetchall("SELECT * FROM schedules")]

    async def claim_daily(
        self, chat_key: str, local_date: date, post: NewPost, when: datetime
    ) -> PostRecord | None:
        """Create the day's post and its claim in one transaction; None if already claimed."""

        async def op(db: aiosqlite.Connection) -> int | None:
            async with db.execute(
                "SELECT 1 FROM daily_posts WHERE chat_key=? AND local_date=?",
                (chat_key, local_date.isoformat()),
            ) as cur:
                if await cur.fetchone() is not None:
                    return None
            post_id = await self._insert_post(db, post)
            await db.execute(
                "INSERT INTO daily_posts(chat_key, local_date, post_id, claimed_at)"
                " VALUES (?,?,?,?)",  # a racing process fails here and its post rolls back
                (chat_key, local_date.isoformat(), post_id, to_ms(when)),
            )
            return post_id

        try:
            post_id = await self._write(op)
        except sqlite3.IntegrityError:
            return None
        return None if post_id is None else await self.get_post(post_id)

    async def mark_daily_published(self, post_id: int, when: datetime) -> None:
        async def op(db: aiosqlite.Connection) -> None:
            await db.execute(
                "UPDATE daily_posts SET published_at=? WHERE post_id=?", (to_ms(when), post_id)
            )

        await self._write(op)

    async def unpublished_dailies(self, claimed_before: datetime) -> list[PostRecord]:
        """Claimed days whose question never reached the chat (a crash in between)."""
        rows = await self._fetchall(
            "SELECT posts.* FROM daily_posts JOIN posts ON posts.id = daily_posts.post_id"
            " WHERE daily_posts.published_at IS NULL AND daily_posts.claimed_at<=?"
            " AND posts.closed_at IS NULL",
            (to_ms(claimed_before),),
        )
        return [_post(r) for r in rows]

    async def daily_day_of(self, chat_key: str, local_date: date) -> int | None:
        row = await self._fetchone(
            "SELECT post_id FROM daily_posts WHERE chat_key=? AND local_date=?",
            (chat_key, local_date.isoformat()),
        )
        return row["post_id"] if row else None

    async def daily_days(self, person_key: str) -> tuple[list[date], date | None]:
        """Local dates with a correct daily answer, and the newest daily in the person's chats."""
        rows = await self._fetchall(
            "SELECT DISTINCT d.local_date FROM answers a JOIN daily_posts d"
            " ON d.post_id = a.post_id WHERE a.person_key=? AND a.correct=1",
            (person_key,),
        )
        latest = await self._fetchone(
            "SELECT MAX(local_date) AS d FROM daily_posts WHERE chat_key IN"
            " (SELECT DISTINCT a.chat_key FROM answers a JOIN daily_posts d"
            "  ON d.post_id = a.post_id WHERE a.person_key=?)",
            (person_key,),
        )
        days = [date.fromisoformat(r["local_date"]) for r in rows]
        newest = latest["d"] if latest else None
        return days, date.fromisoformat(newest) if newest else None


def _schedule(row: aiosqlite.Row) -> Schedule:
    return Schedule(
        chat_key=row["chat_key"],
        at=time.fromisoformat(row["local_time"]),
        tz=row["tz"],
        selector=row["selector"],
        open_minutes=row["open_minutes"],
        updated_at=from_ms(row["updated_at"]),
    )


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements; sqlite3 knows where a trigger body ends."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        if not buffer and (not line.strip() or line.strip().startswith("--")):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete statement in migration: {buffer[:80]!r}")
    return statements
