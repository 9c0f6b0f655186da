"""Chat settings and rounds on both backends: settings stored per chat and replaced whole;
a round's steps asked once each (two processes racing for the next question: one wins);
a round finished once; rounds and settings follow a chat that moved."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.core.ports import ChatSettingsRecord, NewPost
from tests.storage_contract.backends import Backend, Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
CHAT = "tg:-1"


def new_post(question: str = "s-one", chat: str = CHAT) -> NewPost:
    return NewPost(chat, "sample", question, (2, 0, 1), "en", NOW,
                   closes_at=NOW + timedelta(minutes=1))


async def test_chat_settings_are_stored_per_chat(store: Store) -> None:
    assert await store.get_chat_settings(CHAT) is None
    await store.set_chat_settings(ChatSettingsRecord(CHAT, 45, "buttons"), NOW, "tg:1")
    await store.set_chat_settings(ChatSettingsRecord("tg:-2", None, "polls"), NOW)
    assert await store.get_chat_settings(CHAT) == ChatSettingsRecord(CHAT, 45, "buttons")
    await store.set_chat_settings(ChatSettingsRecord(CHAT, None, "buttons"), NOW)
    assert await store.get_chat_settings(CHAT) == ChatSettingsRecord(CHAT, None, "buttons")
    assert await store.get_chat_settings("tg:-2") == ChatSettingsRecord("tg:-2", None, "polls")


async def test_the_chart_setting_is_stored_with_the_others(store: Store) -> None:
    await store.set_chat_settings(ChatSettingsRecord(CHAT, 45, None, chart=True), NOW)
    await store.set_chat_settings(ChatSettingsRecord("tg:-2", None, "polls", chart=False), NOW)
    assert await store.get_chat_settings(CHAT) == ChatSettingsRecord(CHAT, 45, None, True)
    assert await store.get_chat_settings("tg:-2") == ChatSettingsRecord(
        "tg:-2", None, "polls", False)
    await store.set_chat_settings(ChatSettingsRecord(CHAT, 45, None, chart=None), NOW)
    assert await store.get_chat_settings(CHAT) == ChatSettingsRecord(CHAT, 45, None, None)


async def test_a_round_records_its_posts_in_order(store: Store) -> None:
    await store.upsert_chat(CHAT, "Group")
    record = await store.create_round(CHAT, "sample", 3, "buttons", "bn", NOW)
    assert (record.chat_key, record.selector, record.total, record.mode, record.locale,
            record.started_at, record.finished_at, record.posts) == (
        CHAT, "sample", 3, "buttons", "bn", NOW, None, ())
    first = await store.add_round_post(record.id, 0, new_post("s-one"))
    assert first is not None and first.closes_at == NOW + timedelta(minutes=1)
    assert await store.add_round_post(record.id, 0, new_post("s-two")) is None  # asked
    assert await store.add_round_post(record.id, 2, new_post("s-two")) is None  # not yet
    second = await store.add_round_post(record.id, 1, new_post("s-two"))
    assert second is not None
    fetched = await store.get_round(record.id)
    assert fetched is not None and fetched.posts == (first.id, second.id)
    assert [r.id for r in await store.active_rounds()] == [record.id]
    assert [r.id for r in await store.active_rounds(CHAT)] == [record.id]
    assert await store.active_rounds("tg:-2") == []
    assert len(await store.open_posts(CHAT)) == 2  # round posts are ordinary posts


async def test_a_round_finishes_once_and_then_asks_nothing(backend: Backend) -> None:
    async with backend.opened() as one, backend.opened() as two:
        record = await one.create_round(CHAT, None, 2, None, "en", NOW)
        finished = await asyncio.gather(
            *(s.finish_round(record.id, NOW) for s in (one, two) for _ in range(3))
        )
        assert finished.count(True) == 1
        assert await one.active_rounds() == []
        done = await two.get_round(record.id)
        assert done is not None and done.finished_at == NOW
        assert await one.add_round_post(record.id, 0, new_post()) is None


async def test_two_processes_ask_each_step_once(backend: Backend) -> None:
    async with backend.opened() as one, backend.opened() as two:
        record = await one.create_round(CHAT, None, 5, None, "en", NOW)
        for step in range(3):
            asked = await asyncio.gather(
                *(s.add_round_post(record.id, step, new_post()) for s in (one, two, one, two))
            )
            assert sum(p is not None for p in asked) == 1
        fetched = await two.get_round(record.id)
        assert fetched is not None and len(fetched.posts) == 3
        assert len(await one.open_posts(CHAT)) == 3  # the losers left no post behind


async def test_rounds_and_settings_follow_a_chat_that_moved(store: Store) -> None:
    await store.upsert_chat(CHAT, "Group")
    await store.set_chat_settings(ChatSettingsRecord(CHAT, 30, None), NOW)
    record = await store.create_round(CHAT, None, 2, None, "en", NOW)
    assert await store.migrate_chat(CHAT, "tg:-1009")
    assert await store.get_chat_settings(CHAT) is None
    assert await store.get_chat_settings("tg:-1009") == ChatSettingsRecord("tg:-1009", 30)
    assert [r.id for r in await store.active_rounds("tg:-1009")] == [record.id]
