"""Issue 36, end to end through python-telegram-bot against the fake that enforces Telegram's
flood limits (tests/fakes/telegram_limits.py): the daily questions of many chats due at one
minute are sent concurrently at the token's rate, with no 429; a send Telegram refuses for
now is sent again when it said, not after REPUBLISH_AFTER. (The schedule's bound for 500
chats is read with a fake clock in tests/test_rate.py.)"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from bot.core import scheduler
from bot.core.models import Chat
from bot.core.scheduler import REPUBLISH_AFTER
from tests.fakes.telegram_limits import FloodLimits
from tests.telegram_e2e.conftest import Harness

AT = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)
CHATS = 120  # four seconds of the token's budget at 30 a second


async def groups_with_a_daily(tg: Harness, count: int) -> list[int]:
    ids = [-1_002_000_000_000 - i for i in range(count)]
    for chat_id in ids:
        tg.fake.group(chat_id, f"Group {chat_id}")
        key = f"tg:{chat_id}"
        await tg.service.chat_seen_as(key, "supergroup")
        await tg.service.daily.set(Chat(key), "12:30", "UTC", allowed=True)
    return ids


async def test_the_daily_question_due_in_many_chats_goes_at_the_rate_with_no_429(tg, clock):
    ids = await groups_with_a_daily(tg, CHATS)
    tg.fake.limits = limits = FloodLimits()
    clock.set(AT)

    assert (await tg.tick()).posted == CHATS
    assert limits.refused == 0
    polls = tg.fake.calls_of("sendPoll")
    assert sorted(c.params["chat_id"] for c in polls) == sorted(ids)
    assert not tg.fake.calls_of("getChat")  # every kind was known
    # paced, not burst: the fake refuses any send past the token's rate (refused above), so
    # every one of the sends it accepted went within the limit; a wall-clock bound on top
    # failed on a loaded machine, and would not count the fake's allowed burst of 30
    assert len(limits.accepted) == CHATS


async def test_a_send_refused_for_now_is_sent_again_when_telegram_said(tg, clock):
    [chat_id] = await groups_with_a_daily(tg, 1)
    # the limiter's own tries (1 + 3 retries) all refused: the core is told to wait 1 s
    tg.fake.fail_next("sendPoll", retry_after=1, times=4)
    clock.set(AT)
    assert (await tg.tick()).posted == 0

    clock.advance(seconds=2)  # far less than REPUBLISH_AFTER
    assert REPUBLISH_AFTER.total_seconds() > 2
    assert (await tg.tick()).posted == 1
    attempts = tg.fake.calls_of("sendPoll", ok_only=False)
    assert [c.status for c in attempts] == [429] * 4 + [200]
    assert attempts[-1].params["chat_id"] == chat_id
    assert (await tg.tick()).posted == 0  # once
    assert len(tg.fake.calls_of("sendPoll")) == 1


async def test_a_long_fan_out_goes_on_between_ticks_and_nothing_goes_twice(
    tg, clock, monkeypatch
):
    """A fan-out longer than FANOUT_WAIT does not hold the tick (its end is the heartbeat);
    the next ticks wait for it, and re-posting (after REPUBLISH_AFTER) leaves alone what it
    is still sending."""
    monkeypatch.setattr(scheduler, "FANOUT_WAIT", 0.2)
    ids = await groups_with_a_daily(tg, 60)  # two seconds at 30 a second
    tg.fake.limits = limits = FloodLimits()
    clock.set(AT)
    posted = [(await tg.tick()).posted]
    assert posted == [0]  # still going
    clock.advance(seconds=REPUBLISH_AFTER.total_seconds() + 60)
    for _ in range(100):
        posted.append((await tg.tick()).posted)
        if sum(posted) == len(ids):
            break
    assert sum(posted) == len(ids)
    sent = Counter(c.params["chat_id"] for c in tg.fake.calls_of("sendPoll"))
    assert sorted(sent) == sorted(ids) and set(sent.values()) == {1}
    assert limits.refused == 0
