"""Discord's 3 s are counted from the click, not from when the bot got round to it.

The fake dates each interaction's snowflake (`age=`: made that many seconds ago; negative: in
the future, as a skewed clock sees it), so `interaction.created_at` is the click's time and
the responder's budget (`replies.DEADLINE_BUDGET`) counts from there. The slow work is an
answer held on an `asyncio.Event` until the test releases it: no timing is asserted, only the
order of what the fake received.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.adapters.discord import DiscordAdapter, outbox, replies
from bot.core.service import QuizService
from bot.storage import SqliteStorage
from tests.discord_e2e.helpers import post_quiz
from tests.fakes.discord_api import (
    CHANNEL_MESSAGE,
    DEFERRED_MESSAGE,
    EPHEMERAL,
    MANAGE_GUILD,
    FakeDiscord,
    Interaction,
    User,
)


class HeldAnswers:
    """`service.answer` waits until `release()`; `entered` is set once a click reached it."""

    def __init__(self, service: QuizService, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered = asyncio.Event()
        self.released = asyncio.Event()
        real = service.answer

        async def held(*args: Any, **kwargs: Any) -> Any:
            self.entered.set()
            await self.released.wait()
            return await real(*args, **kwargs)

        monkeypatch.setattr(service, "answer", held)

    def release(self) -> None:
        self.released.set()


async def click_right(fake: FakeDiscord, service: QuizService, host: User, clicker: User,
                      *, age: float) -> Interaction:
    reply, q = await post_quiz(fake, service, host, quiz="sample")
    return await fake.click(reply.id, reply.buttons[q.correct]["custom_id"], user=clicker,
                            age=age)


async def test_the_fake_dates_an_interaction_by_its_snowflake(
    fake: FakeDiscord, bot: DiscordAdapter, alice: User
) -> None:
    now = datetime.now(UTC).timestamp()
    old = await fake.slash("help", user=alice, age=90.0)
    assert now - 92 < old.created_at < now - 88
    assert fake.snowflake() != fake.snowflake()
    assert fake.guild_id not in {old.id}  # guilds keep their counter ids (shards)


async def test_a_click_made_long_ago_is_deferred_at_once(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the budget when its handler starts (a storm queued it): deferred before the
    work ends, not a whole budget later. The budget here is longer than the test waits, so
    only a deferral counted from the click's time can arrive."""
    monkeypatch.setattr(replies, "DEADLINE_BUDGET", 60.0)
    held = HeldAnswers(service, monkeypatch)
    it = await click_right(fake, service, alice, bob, age=61.0)
    ack = await fake.ack(it)
    assert not held.released.is_set()
    assert ack["type"] == DEFERRED_MESSAGE and ack["data"]["flags"] & EPHEMERAL
    held.release()
    reply = await fake.reply(it)
    assert it.followups and reply.message is it.followups[0]
    assert reply.ephemeral and "Correct" in reply.content
    assert len(fake.callback_attempts(it)) == 1


async def test_a_click_older_than_the_budget_gets_its_deferral_before_the_work_ends(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The production budget (2 s), a click made 2.5 s ago, its answer held: the deferral
    (type 5) comes while the work waits; the answer is the follow-up."""
    held = HeldAnswers(service, monkeypatch)
    it = await click_right(fake, service, alice, bob, age=replies.DEADLINE_BUDGET + 0.5)
    ack = await fake.ack(it)
    assert not held.released.is_set()
    assert ack["type"] == DEFERRED_MESSAGE
    held.release()
    reply = await fake.reply(it)
    assert it.followups and reply.message is it.followups[0]
    assert "Correct" in reply.content


async def test_a_fresh_click_with_fast_work_is_answered_directly(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
) -> None:
    it = await click_right(fake, service, alice, bob, age=0.0)
    reply = await fake.reply(it)
    assert it.callback_type == CHANNEL_MESSAGE
    assert not it.followups and "Correct" in reply.content
    assert len(fake.callback_attempts(it)) == 1


async def test_a_click_from_the_future_still_defers_within_the_budget(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A clock an hour behind Discord's sees the click an hour ahead: the budget is never
    longer than DEADLINE_BUDGET (here short), so the work held longer is deferred."""
    monkeypatch.setattr(replies, "DEADLINE_BUDGET", 0.05)
    held = HeldAnswers(service, monkeypatch)
    it = await click_right(fake, service, alice, bob, age=-3600.0)
    await held.entered.wait()
    ack = await fake.ack(it)
    assert not held.released.is_set()
    assert ack["type"] == DEFERRED_MESSAGE
    held.release()
    reply = await fake.reply(it)
    assert it.followups and "Correct" in reply.content


async def test_a_forged_click_is_still_refused_when_deferred(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, storage: SqliteStorage,
    alice: User, bob: User,
) -> None:
    """A click made long ago from an old message carrying the open question's custom_id (a
    forged client): deferred at once, then refused, and nothing is stored."""
    # an admin's /quiz replaces the open question (a member's points at it)
    old, _ = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    new, q = await post_quiz(fake, service, alice, MANAGE_GUILD, quiz="sample")
    custom_id = new.buttons[q.correct]["custom_id"]
    forged = [{"type": 1, "components": [
        {"type": 2, "style": 1, "label": "A", "custom_id": custom_id}]}]
    it = await fake.click(old.id, custom_id, user=bob, components=forged, age=10.0)
    refusal = await fake.reply(it)
    assert it.callback_type == DEFERRED_MESSAGE
    assert refusal.ephemeral and "no longer available" in refusal.content
    assert await storage.answer_of(q.post_id, f"dc:{bob.id}") is None


def test_budget_left_is_clamped() -> None:
    class Fake:
        def __init__(self, at: float) -> None:
            self.created_at = datetime.fromtimestamp(at, UTC)

    budget = replies.DEADLINE_BUDGET
    now = 1_800_000_000.0
    left = replies.budget_left
    assert left(Fake(now), now) == budget  # type: ignore[arg-type]
    assert left(Fake(now - 0.5), now) == pytest.approx(budget - 0.5)  # type: ignore[arg-type]
    assert left(Fake(now - 2 * budget), now) == 0.0  # type: ignore[arg-type]
    assert left(Fake(now + 3600), now) == budget  # type: ignore[arg-type]
    assert left(Fake(now - 10**9), now) == 0.0  # type: ignore[arg-type]


async def test_a_follow_up_waits_for_clicks_not_yet_acknowledged(
    fake: FakeDiscord, bot: DiscordAdapter, service: QuizService, alice: User, bob: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a storm acknowledgements go first: a late click (deferred at once) has its answer
    ready while a fresh click is still unanswered; its follow-up is sent only after the fresh
    click got its response."""
    monkeypatch.setattr(replies, "DEADLINE_BUDGET", 60.0)
    monkeypatch.setattr(outbox, "PATIENCE", 60.0)
    reply, q = await post_quiz(fake, service, alice, quiz="sample")
    button = reply.buttons[q.correct]["custom_id"]
    real = service.answer
    gates = {f"dc:{alice.id}": asyncio.Event(), f"dc:{bob.id}": asyncio.Event()}
    entered: set[str] = set()

    async def held(post_id: int, person: Any, *args: Any, **kwargs: Any) -> Any:
        entered.add(person.key)
        await gates[person.key].wait()
        return await real(post_id, person, *args, **kwargs)

    monkeypatch.setattr(service, "answer", held)
    fresh = await fake.click(reply.id, button, user=alice)  # unanswered while held
    await fake.until(lambda: f"dc:{alice.id}" in entered)
    late = await fake.click(reply.id, button, user=bob, age=61.0)
    assert (await fake.ack(late))["type"] == DEFERRED_MESSAGE
    gates[f"dc:{bob.id}"].set()  # the late click's answer is stored...
    while await service.storage.answer_of(q.post_id, f"dc:{bob.id}") is None:  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)  # (the follow-up would have been sent by now)
    assert not late.followups  # ...but its follow-up waits for the fresh click
    gates[f"dc:{alice.id}"].set()
    answer = await fake.reply(late)
    assert "Correct" in answer.content
    assert fresh.callback_type == CHANNEL_MESSAGE
    order = [r.path for r in fake.requests]
    first = order.index(f"/interactions/{fresh.id}/{fresh.token}/callback")
    follow_up = next(i for i, p in enumerate(order) if p == f"/webhooks/{fake.app_id}/{late.token}")
    assert first < follow_up
