"""Several processes on one database, on both backends: each storage here is another process
with its own connections. Uniqueness, daily claims and the scheduler stay exactly-once."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from datetime import UTC, date, datetime, timedelta

from bot.content import Catalog
from bot.core.models import Chat
from bot.core.ports import AnswerRecord, NewPost
from bot.core.schedule import Schedule
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.ports import FakePort
from tests.storage_contract.backends import Backend

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


async def test_first_answer_final_across_processes(backend: Backend) -> None:
    """Three processes, the same people answering the same posts through each of them at
    once: one row per (post, person), and every refusal names that row's option."""
    rng = random.Random(1)
    stores = [backend.store() for _ in range(3)]
    await asyncio.gather(*(s.open() for s in stores))
    try:
        posts = [
            (await stores[0].create_post("tg:-1", "sample", "s-one", (0, 1, 2), "en", NOW)).id
            for _ in range(5)
        ]
        calls = []
        for post in posts:
            for person in range(40):
                for store in stores:
                    option = rng.randrange(3)
                    calls.append((store, AnswerRecord(post, f"tg:{person}", option, option == 0,
                                                      NOW, 100, name=f"p{person}")))
        rng.shuffle(calls)
        results = await asyncio.gather(*(s.record_answer(a) for s, a in calls))
        inserted = Counter(
            (a.post_id, a.person_key) for (_, a), r in zip(calls, results, strict=True)
            if r[0] == "inserted"
        )
        assert len(inserted) == 5 * 40 and max(inserted.values()) == 1
        assert await backend.count("answers") == 5 * 40
        for (_, a), (outcome, earlier) in zip(calls, results, strict=True):
            stored = await stores[1].answer_of(a.post_id, a.person_key)
            assert stored is not None
            if outcome == "duplicate":
                assert earlier is not None and earlier.option == stored.option
            else:
                assert outcome == "inserted" and stored.option == a.option
        await asyncio.gather(*(s.materialize() for s in stores))
        board, _ = await stores[2].leaderboard("tg:-1", None, 100, None)
        assert sum(r.answered for r in board) == 5 * 40
    finally:
        await asyncio.gather(*(s.close() for s in stores))
    await backend.check_aggregates()


async def test_daily_claims_from_two_processes_at_once(backend: Backend) -> None:
    async with backend.opened() as one, backend.opened() as two:
        attempts = []
        for n in range(20):
            for day in (date(2026, 3, 1), date(2026, 3, 2)):
                post = NewPost(f"tg:-{n}", "sample", "s-one", (0, 1, 2), "en", NOW,
                               kind="daily")
                attempts += [(store, f"tg:-{n}", day, post)
                             for store in (one, two, one, two)]
        random.Random(2).shuffle(attempts)
        claimed = await asyncio.gather(
            *(s.claim_daily(chat, day, post, NOW) for s, chat, day, post in attempts)
        )
        wins = Counter((chat, day) for (_, chat, day, _), post in zip(
            attempts, claimed, strict=True) if post is not None)
        assert len(wins) == 40 and set(wins.values()) == {1}
        # no post was left behind by a claim that lost
        assert await backend.count("daily_posts") == 40
        assert await backend.scalar("SELECT count(*) FROM posts WHERE kind = 'daily'") == 40
        for chat, day in wins:
            post_id = await two.daily_day_of(chat, day)
            assert post_id is not None and (await one.get_post(post_id)) is not None


SCHEDULES = [
    ("tg:-1", "02:30", "America/New_York"),
    ("tg:-2", "01:30", "Europe/London"),
    ("tg:-3", "09:00", "Asia/Kolkata"),
    ("tg:-4", "23:50", "Australia/Sydney"),
]


async def test_three_schedulers_post_once_per_day_and_summarise_once(
    backend: Backend, sample_catalog: Catalog
) -> None:
    clock = FakeClock(datetime(2026, 5, 1, 6, tzinfo=UTC))
    port = FakePort("tg:", clock)
    stores = [backend.store() for _ in range(3)]
    await asyncio.gather(*(s.open() for s in stores))
    try:
        schedulers = []
        for seed, store in enumerate(stores):
            service = QuizService(sample_catalog, store, clock, random.Random(seed))
            port.attach(service)
            schedulers.append(Scheduler(service))
        for key, at, tz in SCHEDULES:
            await schedulers[0].service.daily.set(Chat(key), at, tz, allowed=True)
        for _ in range(6 * 24 * 3):  # three days in 10-minute steps, all racing
            clock.advance(minutes=10)
            await asyncio.gather(*(s.tick() for s in schedulers + schedulers))
    finally:
        await asyncio.gather(*(s.close() for s in stores))
    zones = {key: tz for key, _, tz in SCHEDULES}
    per_day = Counter(
        (q.chat_key, Schedule(q.chat_key, datetime.min.time(), zones[q.chat_key]).local_date(at))
        for q, at in zip(port.sent, port.sent_at, strict=True)
    )
    assert max(per_day.values()) == 1
    for key in zones:
        days = sorted(d for (k, d) in per_day if k == key)
        assert len(days) >= 3 and (days[-1] - days[0]) == timedelta(days=len(days) - 1), key
    shown = Counter(s.post_id for s in port.closed)
    assert max(shown.values()) == 1  # each replaced question's summary shown once
    assert len(shown) == len(port.sent) - len(SCHEDULES)
