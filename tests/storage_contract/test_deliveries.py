"""Deliveries besides question summaries, on every store: a finished round's summary and a
claimed day's reminder are due until marked delivered (within the time asked for), then
never again; the steps of one delivery are kept until pruned."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from tests.storage_contract.backends import Backend, Store

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
CHAT = "tg:-1"
HOUR = timedelta(hours=1)


async def test_a_finished_round_summary_is_due_until_posted(backend: Backend) -> None:
    async with backend.opened() as store:
        await store.upsert_chat(CHAT, "Group")
        running = await store.create_round(CHAT, "sample", 3, None, "en", NOW)
        first = await store.create_round(CHAT, "sample", 3, None, "en", NOW)
        second = await store.create_round("tg:-2", None, 2, None, "bn", NOW)
        assert await store.unposted_round_summaries(NOW - HOUR, NOW + HOUR) == []
        assert await store.finish_round(first.id, NOW + timedelta(minutes=1))
        assert await store.finish_round(second.id, NOW + timedelta(minutes=2))
        due = await store.unposted_round_summaries(NOW - HOUR, NOW + HOUR)
        assert [(r.id, r.chat_key, r.locale) for r in due] == [
            (first.id, CHAT, "en"), (second.id, "tg:-2", "bn")]
        # finished too long ago, or too lately (another process is delivering it now)
        assert await store.unposted_round_summaries(NOW + HOUR, NOW + 2 * HOUR) == []
        assert [r.id for r in await store.unposted_round_summaries(
            NOW - HOUR, NOW + timedelta(seconds=90))] == [first.id]
        await store.mark_round_summary_posted(first.id, NOW + HOUR)
        await store.mark_round_summary_posted(first.id, NOW + 2 * HOUR)  # once is enough
    async with backend.opened() as store:  # it is stored
        due = await store.unposted_round_summaries(NOW - HOUR, NOW + HOUR)
        assert [r.id for r in due] == [second.id]
        assert running.id not in {r.id for r in due}


async def test_a_claimed_reminder_is_due_until_sent(backend: Backend) -> None:
    day = date(2026, 3, 1)
    async with backend.opened() as store:
        assert await store.unsent_reminders(NOW - HOUR, NOW + HOUR) == []
        assert await store.claim_reminder("tg:2", day, NOW)
        assert await store.claim_reminder("tg:1", day, NOW + timedelta(minutes=1))
        assert await store.claim_reminder("tg:1", day + timedelta(days=1), NOW + 30 * HOUR)
        assert await store.unsent_reminders(NOW - HOUR, NOW + HOUR) == [
            ("tg:1", day), ("tg:2", day)]
        assert await store.unsent_reminders(NOW - HOUR, NOW + timedelta(seconds=30)) == [
            ("tg:2", day)]
        await store.mark_reminder_sent("tg:2", day, NOW + HOUR)
        await store.mark_reminder_sent("tg:3", day, NOW + HOUR)  # never claimed: nothing
    async with backend.opened() as store:
        assert await store.unsent_reminders(NOW - HOUR, NOW + HOUR) == [("tg:1", day)]
        assert await store.claim_reminder("tg:3", day, NOW)  # marking it stored nothing


async def test_the_steps_of_a_delivery_are_kept_until_pruned(store: Store) -> None:
    assert await store.delivery_steps("summary:1") == frozenset()
    await store.delivery_step_done("summary:1", "chart", NOW)
    await store.delivery_step_done("summary:1", "chart", NOW + HOUR)  # once
    await store.delivery_step_done("summary:2", "chart", NOW + 2 * HOUR)
    await store.delivery_step_done("summary:1", "text", NOW)
    assert await store.delivery_steps("summary:1") == frozenset({"chart", "text"})
    await store.forget_delivery_step("summary:1", "text")  # refused: to be sent again
    await store.forget_delivery_step("summary:1", "text")
    assert await store.delivery_steps("summary:1") == frozenset({"chart"})
    assert await store.forget_delivery_steps(NOW + HOUR) == 1
    assert await store.delivery_steps("summary:1") == frozenset()
    assert await store.delivery_steps("summary:2") == frozenset({"chart"})
