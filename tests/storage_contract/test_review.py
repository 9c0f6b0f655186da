"""Spaced review's storage on both backends: a person's answers oldest first with whether the
post was their own, reminders set, changed and removed, and one reminder claim per person and
local date, shared by every process on the database."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, time, timedelta

from bot.core.ports import AnswerRecord, ReviewAnswer
from bot.core.schedule import Schedule
from tests.storage_contract.backends import Backend, Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def test_review_answers_are_the_persons_oldest_first(store: Store) -> None:
    shared = await store.create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)
    own = await store.create_post("tg:1", "sample", "s-two", (2, 1, 0), "en", NOW,
                                  kind="review", owner_key="tg:1")
    later = NOW + timedelta(minutes=5)
    await store.record_answer(AnswerRecord(own.id, "tg:1", 0, False, later, 4000, "Ada"))
    await store.record_answer(AnswerRecord(shared.id, "tg:1", 1, True, NOW, 90_000, "Ada"))
    await store.record_answer(AnswerRecord(shared.id, "tg:2", 1, True, NOW, 1000, "Bo"))
    assert await store.review_answers("tg:1") == [
        ReviewAnswer("sample", "s-one", True, NOW, 90_000, False),
        ReviewAnswer("sample", "s-two", False, later, 4000, True),
    ]
    assert await store.review_answers("tg:3") == []


async def test_a_reminder_is_set_changed_and_removed(store: Store) -> None:
    assert await store.get_reminder("tg:1") is None
    assert await store.reminders() == []
    first = Schedule("tg:1", time(9, 0), "Asia/Kolkata", updated_at=NOW)
    await store.set_reminder(first)
    assert await store.get_reminder("tg:1") == first
    changed = Schedule("tg:1", time(18, 30), "UTC", updated_at=NOW + timedelta(hours=1))
    await store.set_reminder(changed)
    await store.set_reminder(Schedule("dc:2", time(7, 5), "Europe/Berlin", updated_at=NOW))
    assert sorted(await store.reminders(), key=lambda r: r.chat_key) == [
        Schedule("dc:2", time(7, 5), "Europe/Berlin", updated_at=NOW), changed,
    ]
    assert await store.delete_reminder("tg:1")
    assert not await store.delete_reminder("tg:1")
    assert [r.chat_key for r in await store.reminders()] == ["dc:2"]


async def test_a_reminder_day_is_claimed_once_by_every_process(backend: Backend) -> None:
    async with backend.opened() as one, backend.opened() as two:
        day = date(2026, 3, 2)
        claims = await asyncio.gather(
            *(store.claim_reminder("tg:1", day, NOW) for store in (one, two, one, two))
        )
        assert sorted(claims) == [False, False, False, True]
        assert await two.claim_reminder("tg:1", day + timedelta(days=1), NOW)
        assert await one.claim_reminder("tg:2", day, NOW)
        assert not await one.claim_reminder("tg:2", day, NOW)


async def test_the_review_tables_are_in_the_newest_schema(backend: Backend) -> None:
    async with backend.opened():
        for table in ("reminders", "reminder_days"):
            assert await backend.count(table) == 0
