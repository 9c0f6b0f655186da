"""Issue 36, the fan-outs beside the daily question: review reminders due at one minute for
hundreds of people go out concurrently (core/delivery.py's fan_out), paced by the token's
budget against the fake that enforces Telegram's flood limits: none refused, each sent once.
Concurrency is read from the sends in flight at once, not from a wall-clock bound."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from bot.core.models import Chat, Person
from tests.fakes.telegram_limits import FloodLimits
from tests.telegram_e2e.conftest import Harness

PEOPLE = 320  # over ten seconds of the token's budget at 30 a second
GROUP = Chat("tg:-1002000000001", "Study group")
NINE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


async def people_with_a_review_due(tg: Harness, count: int) -> list[int]:
    """Each answered a question wrong (a card due the next day) and wants a reminder at 9."""
    question = await tg.service.questions.post(GROUP, "sample", "s-one", "en")
    wrong = (question.correct + 1) % len(question.options)
    ids = list(range(5001, 5001 + count))
    for user_id in ids:
        tg.fake.private_chat(tg.fake.user(user_id, f"P{user_id}"))
        person = Person(f"tg:{user_id}", f"P{user_id}")
        assert (await tg.service.answer(question.post_id, person, wrong)).accepted
        await tg.service.spaced.set_reminder(person, "09:00", "UTC")
    return ids


def in_flight(send: Callable[[str, str], Awaitable[None]], peak: list[int]
              ) -> Callable[[str, str], Awaitable[None]]:
    """`send`, counting how many of its calls run at once (peak[1], now in peak[0])."""
    async def counted(person_key: str, text: str) -> None:
        peak[0] += 1
        peak[1] = max(peak[1], peak[0])
        try:
            await send(person_key, text)
        finally:
            peak[0] -= 1

    return counted


async def test_reminders_due_at_once_go_concurrently_at_the_rate_each_once(tg, clock):
    ids = await people_with_a_review_due(tg, PEOPLE)
    port = tg.service.delivery.port_for(f"tg:{ids[0]}")
    assert port is not None
    peak = [0, 0]
    port.send_private = in_flight(port.send_private, peak)
    tg.fake.limits = limits = FloodLimits()
    clock.set(NINE)

    assert (await tg.tick()).reminded == PEOPLE
    assert limits.refused == 0
    sent = Counter(c.params["chat_id"] for c in tg.fake.calls_of("sendMessage"))
    assert sorted(sent) == ids and set(sent.values()) == {1}
    assert peak[1] > 1  # one at a time before: a round trip each, below the token's rate

    clock.advance(minutes=5)  # nothing left due, nothing sent again
    assert (await tg.tick()).reminded == 0
    assert len(tg.fake.calls_of("sendMessage")) == PEOPLE
