"""SQLite storage on a real file: durability settings, migrations, uniqueness, group commit."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from bot.core.ports import AnswerRecord
from bot.core.schedule import Schedule
from bot.storage import SqliteStorage
from bot.storage.migrations import MIGRATIONS
from bot.storage.sqlite import _split_sql

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def make_post(store: SqliteStorage, chat: str = "tg:-1") -> int:
    post = await store.create_post(chat, "sample", "s-one", (2, 0, 1), "en", NOW)
    return post.id


def answer(post_id: int, person: str, option: int = 0, correct: bool = True) -> AnswerRecord:
    return AnswerRecord(post_id, person, option, correct, NOW, 1500)


async def test_pragmas_and_schema_version(tmp_path: Path) -> None:
    def pragma(name: str) -> Callable[[sqlite3.Connection], object]:
        return lambda db: db.execute(f"PRAGMA {name}").fetchone()[0]

    async with SqliteStorage(tmp_path / "a.db") as store:
        for worker in (store._writer, store._reader):  # both connections
            assert worker is not None
            assert await worker.submit(pragma("journal_mode")) == "wal"
            assert await worker.submit(pragma("foreign_keys")) == 1
            assert await worker.submit(pragma("synchronous")) == 2  # FULL
    with sqlite3.connect(tmp_path / "a.db") as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


async def test_reopening_does_not_migrate_twice_and_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "b.db"
    async with SqliteStorage(path) as store:
        post_id = await make_post(store)
        assert await store.record_answer(answer(post_id, "tg:1")) == ("inserted", None)
    async with SqliteStorage(path) as store:
        stored = await store.answer_of(post_id, "tg:1")
        assert stored is not None and stored.elapsed_ms == 1500
        assert (await store.get_post(post_id)).order == (2, 0, 1)  # type: ignore[union-attr]


async def test_database_enforces_one_answer_per_post_and_person(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with SqliteStorage(path) as store:
        post_id = await make_post(store)
        assert await store.record_answer(answer(post_id, "tg:1", option=0)) == ("inserted", None)
        outcome, dup = await store.record_answer(answer(post_id, "tg:1", option=1, correct=False))
        assert outcome == "duplicate"
        assert dup is not None and dup.option == 0 and dup.correct  # the first one stays
    with sqlite3.connect(path) as raw, pytest.raises(sqlite3.IntegrityError):
        raw.execute(
            "INSERT INTO answers(post_id, person_key, option, correct, answered_at, elapsed_ms,"
            " chat_key, quiz_id, question_id) VALUES (?, 'tg:1', 1, 0, 0, 0, 'tg:-1', 'q', 'x')",
            (post_id,),
        )


async def test_answer_to_missing_post_fails_alone(tmp_path: Path) -> None:
    async with SqliteStorage(tmp_path / "d.db") as store:
        post_id = await make_post(store)
        results = await asyncio.gather(
            store.record_answer(answer(post_id, "tg:1")),
            store.record_answer(answer(12345, "tg:2")),
            store.record_answer(answer(post_id, "tg:3")),
            return_exceptions=True,
        )
        assert results[0] == results[2] == ("inserted", None)
        assert isinstance(results[1], LookupError)
        assert {a.person_key for a in await store.answers_for_post(post_id)} == {"tg:1", "tg:3"}


async def test_concurrent_writes_are_grouped_and_all_committed(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    async with SqliteStorage(path) as store:
        post_id = await make_post(store)
        await asyncio.gather(*(store.record_answer(answer(post_id, f"tg:{i}")) for i in range(200)))
        await store.materialize()  # the aggregates follow the answers (materializer.py)
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 200
        totals = raw.execute("SELECT SUM(answered) FROM totals WHERE chat_key='*'").fetchone()
        assert totals[0] == 200


async def test_two_processes_on_one_file(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    async with SqliteStorage(path) as one, SqliteStorage(path) as two:
        post_id = await make_post(one)
        results = await asyncio.gather(
            *(s.record_answer(answer(post_id, "tg:1")) for s in (one, two) for _ in range(5))
        )
        assert [r[0] for r in results].count("inserted") == 1


async def test_close_post_only_once(tmp_path: Path) -> None:
    async with SqliteStorage(tmp_path / "g.db") as store:
        post_id = await make_post(store)
        closes = await asyncio.gather(*(store.close_post(post_id, NOW) for _ in range(5)))
        assert closes.count(True) == 1
        late = await store.record_answer(answer(post_id, "tg:1"))
        assert late == ("closed", None)


async def test_refs_map_back_to_posts(tmp_path: Path) -> None:
    async with SqliteStorage(tmp_path / "h.db") as store:
        post_id = await make_post(store)
        await store.bind_ref(post_id, "tg-poll:abc")
        assert (await store.post_by_ref("tg-poll:abc")).id == post_id  # type: ignore[union-attr]
        assert await store.post_by_ref("tg-poll:zzz") is None
        assert await store.refs(post_id) == ("tg-poll:abc",)


async def test_acknowledged_answer_is_on_disk_before_return(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    async with SqliteStorage(path) as store:
        post_id = await make_post(store)
        await store.record_answer(answer(post_id, "tg:1"))
        # another connection sees it at once: it was committed before the call returned
        async with aiosqlite.connect(path) as other:
            async with other.execute("SELECT COUNT(*) FROM answers") as cur:
                assert (await cur.fetchone())[0] == 1


def test_migrations_split_into_whole_statements() -> None:
    statements = _split_sql(MIGRATIONS[0])
    assert all(sqlite3.complete_statement(s) for s in statements)
    assert any(s.startswith("CREATE TRIGGER") and s.rstrip().endswith("END;") for s in statements)


async def test_migrate_chat_moves_everything(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with SqliteStorage(path) as store:
        post_id = await make_post(store, "tg:-1")
        await store.record_answer(answer(post_id, "tg:1"))
        await store.set_chat_locale("tg:-1", "bn")
        await store.set_schedule(Schedule("tg:-1", time(9), "Asia/Dhaka", updated_at=NOW))
        await store.materialize()
        assert await store.migrate_chat("tg:-1", "tg:-1001") is True
        assert await store.migrate_chat("tg:-1", "tg:-1001") is False
        assert (await store.get_post(post_id)).chat_key == "tg:-1001"  # type: ignore[union-attr]
        assert await store.chat_locale("tg:-1001") == "bn"
        assert await store.get_schedule("tg:-1") is None
        assert (await store.get_schedule("tg:-1001")).tz == "Asia/Dhaka"  # type: ignore[union-attr]
        rows, _ = await store.leaderboard("tg:-1001", None, 10, None)
        assert [r.person_key for r in rows] == ["tg:1"]
        assert (await store.leaderboard("tg:-1", None, 10, None))[0] == []
        week, _ = await store.leaderboard("tg:-1001", NOW, 10, None)
        assert [r.correct for r in week] == [1]


async def test_an_answer_stores_its_person_and_a_refused_one_stores_nothing(
    tmp_path: Path,
) -> None:
    async with SqliteStorage(tmp_path / "n.db") as store:
        post_id = await make_post(store)
        named = AnswerRecord(post_id, "tg:1", 0, True, NOW, 10, name="Ada")
        assert await store.record_answer(named) == ("inserted", None)
        assert await store.person_name("tg:1") == "Ada"
        await store.close_post(post_id, NOW)
        late = AnswerRecord(post_id, "tg:2", 0, True, NOW, 10, name="Bob")
        assert await store.record_answer(late) == ("closed", None)
        assert await store.person_name("tg:2") is None
        renamed = AnswerRecord(await make_post(store), "tg:1", 0, True, NOW, 10, name="Ada L.")
        assert (await store.record_answer(renamed))[0] == "inserted"
        assert await store.person_name("tg:1") == "Ada L."


async def test_cached_languages_follow_every_change(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    async with SqliteStorage(path) as store, SqliteStorage(path) as other:
        post_id = await make_post(store)
        await store.record_answer(answer(post_id, "tg:1"))  # caches tg:1's language (none)
        assert await store.person_locale("tg:1") is None
        await store.set_person_locale("tg:1", "bn")
        assert await store.person_locale("tg:1") == "bn"
        assert await store.chat_locale("tg:-1") is None
        await store.set_chat_locale("tg:-1", "hi")
        assert await store.chat_locale("tg:-1") == "hi"
        await store.upsert_chat("tg:-1", "group", platform_locale="bn")
        assert await store.chat_platform_locale("tg:-1") == "bn"
        # another process's change shows once the entry expires (LOCALE_TTL)
        await other.set_person_locale("tg:1", "hi")
        assert await store.person_locale("tg:1") == "bn"
        store._person_locales.ttl = -1  # expired as soon as stored
        store._person_locales.put("tg:1", "bn")
        assert await store.person_locale("tg:1") == "hi"
        await store.migrate_chat("tg:-1", "tg:-100")
        assert await store.chat_locale("tg:-1") is None
        assert await store.chat_locale("tg:-100") == "hi"


async def test_concurrent_misses_of_one_post_read_it_once(tmp_path: Path) -> None:
    async with SqliteStorage(tmp_path / "o.db") as store:
        post_id = await make_post(store)
        store._posts.clear()
        reader = store._reader
        assert reader is not None
        reads: list[str] = []
        original = reader.submit

        def counted(fn: Any, *args: Any) -> Any:
            reads.append(fn.__name__)
            return original(fn, *args)

        reader.submit = counted  # type: ignore[method-assign]
        posts = await asyncio.gather(*(store.get_post(post_id) for _ in range(100)))
        assert {p.id for p in posts if p is not None} == {post_id}
        assert reads == ["post"]
