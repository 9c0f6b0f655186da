"""The storage contract on both backends: durability settings, migrations, uniqueness enforced
by the database, group commit, a failing write undone alone, two storages (two processes) on
one database, caches that follow every change."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, time
from typing import Any

import asyncpg
import pytest

from bot.core.ports import AnswerRecord
from bot.core.schedule import Schedule
from bot.storage import SqliteStorage
from bot.storage.postgres import schema
from bot.storage.postgres.storage import PostgresStorage
from bot.storage.sqlite import _split_sql
from bot.storage.sqlite.migrations import MIGRATIONS
from tests.storage_contract.backends import Backend, Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def make_post(store: Store, chat: str = "tg:-1") -> int:
    post = await store.create_post(chat, "sample", "s-one", (2, 0, 1), "en", NOW)
    return post.id


def answer(post_id: int, person: str, option: int = 0, correct: bool = True) -> AnswerRecord:
    return AnswerRecord(post_id, person, option, correct, NOW, 1500)


async def test_durability_settings_and_schema_version(backend: Backend) -> None:
    if backend.name == "sqlite":
        def pragma(name: str) -> Callable[[sqlite3.Connection], object]:
            return lambda db: db.execute(f"PRAGMA {name}").fetchone()[0]

        async with backend.opened() as store:
            assert isinstance(store, SqliteStorage)
            for worker in (store._writer, store._reader):  # both connections
                assert worker is not None
                assert await worker.submit(pragma("journal_mode")) == "wal"
                assert await worker.submit(pragma("foreign_keys")) == 1
                assert await worker.submit(pragma("synchronous")) == 2  # FULL
        assert await backend.scalar("PRAGMA user_version") == len(MIGRATIONS)
    else:
        async with backend.opened() as store:
            assert isinstance(store, PostgresStorage)
            writer = store._writer
            assert writer is not None and writer._db is not None
            # acknowledged means flushed: never an asynchronous commit on the writer
            assert await writer._db.fetchval("SHOW synchronous_commit") != "off"
        versions = await backend.fetch("SELECT version, app FROM schema_version ORDER BY 1")
        assert versions == [(n, "quizbot") for n in range(1, len(schema.MIGRATIONS) + 1)]


async def test_reopening_does_not_migrate_twice_and_keeps_data(backend: Backend) -> None:
    async with backend.opened() as store:
        post_id = await make_post(store)
        assert await store.record_answer(answer(post_id, "tg:1")) == ("inserted", None)
    async with backend.opened() as store:
        stored = await store.answer_of(post_id, "tg:1")
        assert stored is not None and stored.elapsed_ms == 1500
        assert stored.answered_at == NOW
        post = await store.get_post(post_id)
        assert post is not None and post.order == (2, 0, 1)
    if backend.name == "postgres":
        assert await backend.count("schema_version") == len(schema.MIGRATIONS)


async def test_database_enforces_one_answer_per_post_and_person(backend: Backend) -> None:
    async with backend.opened() as store:
        post_id = await make_post(store)
        assert await store.record_answer(answer(post_id, "tg:1", option=0)) == ("inserted", None)
        outcome, dup = await store.record_answer(answer(post_id, "tg:1", option=1, correct=False))
        assert outcome == "duplicate"
        assert dup is not None and dup.option == 0 and dup.correct  # the first one stays
    # and the database itself refuses a second row, whoever writes it
    violation = sqlite3.IntegrityError if backend.name == "sqlite" else asyncpg.UniqueViolationError
    correct = 0 if backend.name == "sqlite" else False
    answered_at = 0 if backend.name == "sqlite" else NOW
    with pytest.raises(violation):
        await backend.fetch(
            "INSERT INTO answers(post_id, person_key, option, correct, answered_at, elapsed_ms,"
            " chat_key, quiz_id, question_id) VALUES ($1, 'tg:1', 1, $2, $3, 0, 'tg:-1', 'q',"
            " 'x')",
            post_id, correct, answered_at,
        )


async def test_answer_to_missing_post_fails_alone(store: Store) -> None:
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


async def test_concurrent_writes_are_grouped_and_all_committed(backend: Backend) -> None:
    async with backend.opened() as store:
        assert isinstance(store, SqliteStorage | PostgresStorage)
        post_id = await make_post(store)
        writer = store._writer
        assert writer is not None
        batches = writer.batches
        await asyncio.gather(*(store.record_answer(answer(post_id, f"tg:{i}")) for i in range(200)))
        assert writer.batches - batches < 200 // 2  # they shared transactions
        await store.materialize()  # the aggregates follow the answers
        assert await backend.count("answers") == 200
        assert await backend.scalar(
            "SELECT SUM(answered) FROM totals WHERE chat_key = '*'"
        ) == 200


async def test_two_processes_on_one_database(backend: Backend) -> None:
    async with backend.opened() as one, backend.opened() as two:
        post_id = await make_post(one)
        results = await asyncio.gather(
            *(s.record_answer(answer(post_id, "tg:1")) for s in (one, two) for _ in range(5))
        )
        assert [r[0] for r in results].count("inserted") == 1
        assert {r[1].option for r in results if r[1] is not None} == {0}


async def test_close_post_only_once(backend: Backend) -> None:
    async with backend.opened() as store, backend.opened() as other:
        post_id = await make_post(store)
        closes = await asyncio.gather(
            *(s.close_post(post_id, NOW) for s in (store, other) for _ in range(5))
        )
        assert closes.count(True) == 1
        late = await store.record_answer(answer(post_id, "tg:1"))
        assert late == ("closed", None)


async def test_an_answer_after_a_close_by_another_process_is_refused(backend: Backend) -> None:
    async with backend.opened() as store, backend.opened() as other:
        post_id = await make_post(store)
        assert (await store.get_post(post_id)) is not None  # cached open in `store`
        assert await other.close_post(post_id, NOW)
        assert await store.record_answer(answer(post_id, "tg:1")) == ("closed", None)


async def test_refs_map_back_to_posts(store: Store) -> None:
    post_id = await make_post(store)
    await store.bind_ref(post_id, "tg-poll:abc")
    bound = await store.post_by_ref("tg-poll:abc")
    assert bound is not None and bound.id == post_id
    assert await store.post_by_ref("tg-poll:zzz") is None
    assert await store.refs(post_id) == ("tg-poll:abc",)
    other = await make_post(store)
    await store.bind_ref(other, "tg-poll:abc")  # a reference moves to its newest post
    moved = await store.post_by_ref("tg-poll:abc")
    assert moved is not None and moved.id == other
    # a poll and its message are bound in one write (a crash never keeps one of the two)
    await store.bind_ref(post_id, "tg-msg:7:8", "tg-poll:def")
    assert await store.refs(post_id) == ("tg-msg:7:8", "tg-poll:def")


async def test_acknowledged_answer_is_committed_before_return(backend: Backend) -> None:
    async with backend.opened() as store:
        post_id = await make_post(store)
        await store.record_answer(answer(post_id, "tg:1"))
        # another connection sees it at once: it was committed before the call returned
        assert await backend.count("answers") == 1


def test_sqlite_migrations_split_into_whole_statements() -> None:
    statements = _split_sql(MIGRATIONS[0])
    assert all(sqlite3.complete_statement(s) for s in statements)
    assert any(s.startswith("CREATE TRIGGER") and s.rstrip().endswith("END;") for s in statements)


async def test_migrate_chat_moves_everything(store: Store) -> None:
    post_id = await make_post(store, "tg:-1")
    await store.record_answer(answer(post_id, "tg:1"))
    await store.set_chat_locale("tg:-1", "bn")
    await store.set_schedule(Schedule("tg:-1", time(9), "Asia/Dhaka", updated_at=NOW))
    await store.materialize()
    assert await store.migrate_chat("tg:-1", "tg:-1001") is True
    assert await store.migrate_chat("tg:-1", "tg:-1001") is False
    post = await store.get_post(post_id)
    assert post is not None and post.chat_key == "tg:-1001"
    assert await store.chat_locale("tg:-1001") == "bn"
    assert await store.get_schedule("tg:-1") is None
    schedule = await store.get_schedule("tg:-1001")
    assert schedule is not None and schedule.tz == "Asia/Dhaka"
    rows, _ = await store.leaderboard("tg:-1001", None, 10, None)
    assert [r.person_key for r in rows] == ["tg:1"]
    assert (await store.leaderboard("tg:-1", None, 10, None))[0] == []
    week, _ = await store.leaderboard("tg:-1001", NOW, 10, None)
    assert [r.correct for r in week] == [1]


async def test_an_answer_stores_its_person_and_a_refused_one_stores_nothing(
    store: Store,
) -> None:
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


async def test_cached_languages_follow_every_change(backend: Backend) -> None:
    async with backend.opened() as store, backend.opened() as other:
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
        await other.set_person_locale("tg:1", "hi")
        if backend.name == "sqlite":
            # another process's change shows once the entry expires (LOCALE_TTL)
            assert await store.person_locale("tg:1") == "bn"
            assert isinstance(store, SqliteStorage)
            store._person_locales.ttl = -1  # expired as soon as stored
            store._person_locales.put("tg:1", "bn")
        else:
            # PostgreSQL tells every process at COMMIT (LISTEN/NOTIFY)
            await eventually(lambda: store.person_locale("tg:1"), "hi")
        assert await store.person_locale("tg:1") == "hi"
        await store.migrate_chat("tg:-1", "tg:-100")
        assert await store.chat_locale("tg:-1") is None
        assert await store.chat_locale("tg:-100") == "hi"
        if backend.name == "postgres":
            await other.set_chat_locale("tg:-100", "en")
            await eventually(lambda: store.chat_locale("tg:-100"), "en")


async def eventually(read: Callable[[], Any], expected: object) -> None:
    """Polled, not timed: a notification arrives within a few milliseconds."""
    for _ in range(2000):
        if await read() == expected:
            return
        await asyncio.sleep(0.005)
    assert await read() == expected


async def test_concurrent_misses_of_one_post_read_it_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert isinstance(store, SqliteStorage | PostgresStorage)
    post_id = await make_post(store)
    store._posts.clear()
    reads: list[str] = []
    if isinstance(store, SqliteStorage):
        reader = store._reader
        assert reader is not None
        original = reader.submit

        def counted(fn: Any, *args: Any) -> Any:
            reads.append(fn.__name__)
            return original(fn, *args)

        monkeypatch.setattr(reader, "submit", counted)
    else:
        original_read = store._read

        def counted_read(fn: Any, *args: Any) -> Any:
            reads.append(fn.__name__)
            return original_read(fn, *args)

        monkeypatch.setattr(store, "_read", counted_read)
    posts = await asyncio.gather(*(store.get_post(post_id) for _ in range(100)))
    assert {p.id for p in posts if p is not None} == {post_id}
    assert reads == ["post"]


async def test_a_lost_listening_connection_is_replaced_and_nothing_stale_is_kept(
    backend: Backend,
) -> None:
    if backend.name != "postgres":
        return  # SQLite hears nothing: its caches expire (LOCALE_TTL)
    async with backend.opened() as store, backend.opened() as other:
        assert isinstance(store, PostgresStorage)
        await store.set_person_locale("tg:1", "bn")
        assert await store.person_locale("tg:1") == "bn"  # cached
        listener = store._listener
        assert listener is not None
        await backend.fetch("SELECT pg_terminate_backend($1)", listener.get_server_pid())
        await other.set_person_locale("tg:1", "hi")  # perhaps while nobody listens
        await eventually(lambda: store.person_locale("tg:1"), "hi")
        for _ in range(2000):
            if store._listener is not None and store._listener is not listener:
                break
            await asyncio.sleep(0.005)
        assert store._listener is not None and store._listener is not listener
        await other.set_person_locale("tg:1", "en")  # heard again
        await eventually(lambda: store.person_locale("tg:1"), "en")


async def test_chats_and_chat_title_give_every_chat_its_latest_title(store: Store) -> None:
    assert await store.chats() == []
    await store.upsert_chat("tg:-2", "second")
    await store.upsert_chat("dc:9", "server")
    await store.upsert_chat("tg:-2", "renamed")
    assert await store.chats() == [("dc:9", "server"), ("tg:-2", "renamed")]
    assert (await store.chat_title("tg:-2"), await store.chat_title("tg:-3")) == ("renamed", None)
