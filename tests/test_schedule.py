"""Daily schedules: exactly one post per local day over 400 simulated days, DST, restarts,
two processes on one database, pool cycling and day streaks. No platform involved."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, time, timedelta

import pytest

from bot.content import Catalog
from bot.core import render
from bot.core import scheduler as scheduler_module
from bot.core.errors import ScheduleError, UnknownQuiz
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.schedule import Schedule, day_streaks, parse_time, parse_zone
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from bot.i18n import translator
from tests.clock import FakeClock
from tests.ports import FakePort
from tests.sqlite_in_loop import LoopDatabase, LoopStorage

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database


def recording_port(clock: FakeClock, failures: int = 0) -> FakePort:
    """A Telegram-like port whose next `failures` sends fail as an unreachable platform."""
    port = FakePort("tg:", clock)
    port.fail_sends(*(ConnectionError("platform unreachable") for _ in range(failures)))
    return port


def posted(port: FakePort) -> list[tuple[ShownQuestion, datetime]]:
    return list(zip(port.sent, port.sent_at, strict=True))


SCHEDULES = [
    ("tg:-1", "02:30", "America/New_York"),  # inside the spring-forward gap once a year
    ("tg:-2", "01:30", "Europe/London"),  # repeated in the autumn fold
    ("tg:-3", "09:00", "Asia/Kolkata"),
    ("tg:-4", "23:50", "Australia/Sydney"),
]
ZONES = {key: tz for key, _, tz in SCHEDULES}


def local_day(key: str, when: datetime) -> date:
    return Schedule(key, time(0), ZONES[key]).local_date(when)


_opened: list[LoopStorage] = []


@pytest.fixture(autouse=True)
async def _close_stores() -> AsyncIterator[None]:
    """A failed assertion must not leave a database thread running (the run would hang)."""
    yield
    while _opened:
        await _opened.pop().close()


async def boot(database: LoopDatabase, catalog: Catalog, clock: FakeClock, pub: FakePort,
               seed: float) -> tuple[LoopStorage, Scheduler]:
    store = LoopStorage(database)
    await store.open()
    _opened.append(store)
    service = QuizService(catalog, store, clock, random.Random(seed))
    pub.attach(service)
    return store, Scheduler(service)


async def test_400_days_exactly_once_per_local_day_with_restarts(
    sample_catalog: Catalog
) -> None:
    rng = random.Random(2026)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = FakeClock(start - timedelta(days=2))
    pub = recording_port(clock)
    database = LoopDatabase()
    store, scheduler = await boot(database, sample_catalog, clock, pub, rng.random())
    for key, at, tz in SCHEDULES:
        await scheduler.service.daily.set(Chat(key), at, tz, allowed=True)
    clock.set(start)

    moments = sorted(
        Schedule(key, parse_time(at), tz).moment(start.date() + timedelta(days=d))
        for key, at, tz in SCHEDULES
        for d in range(-1, 403)
    )
    end = start + timedelta(days=400)
    restarts = 0
    while clock.now() < end:
        await scheduler.tick()
        upcoming = next(m for m in moments if m > clock.now())
        # step at most 3 hours, and stop exactly on each scheduled minute
        clock.set(min(clock.now() + timedelta(minutes=rng.randrange(1, 180)), upcoming))
        if rng.random() < 0.05:
            await store.close()
            store, scheduler = await boot(database, sample_catalog, clock, pub, rng.random())
            restarts += 1
    await store.close()

    per_day = Counter((q.chat_key, local_day(q.chat_key, at)) for q, at in posted(pub))
    assert restarts > 50
    for key, at, tz in SCHEDULES:
        days = sorted(d for (k, d) in per_day if k == key)
        assert len(days) >= 399
        assert (days[-1] - days[0]).days + 1 == len(days), f"{key} skipped a day"
        assert max(per_day[(key, d)] for d in days) == 1, f"{key} posted twice on a day"
        schedule = Schedule(key, parse_time(at), tz)
        for q, when in posted(pub):
            if q.chat_key == key:  # never before its local time on its local day
                assert when >= schedule.moment(local_day(key, when))
    # each new daily question closed the previous one with a summary
    assert len(pub.closed) == len(pub.sent) - len(SCHEDULES)


async def test_down_at_the_minute_posts_later_that_day(
    sample_catalog: Catalog
) -> None:
    clock = FakeClock(datetime(2026, 5, 1, 6, tzinfo=UTC))
    pub = recording_port(clock)
    store, scheduler = await boot(LoopDatabase(), sample_catalog, clock, pub, 1)
    await scheduler.service.daily.set(Chat("tg:-3"), "09:00", "Asia/Kolkata", allowed=True)
    clock.set(datetime(2026, 5, 2, 3, 29, tzinfo=UTC))  # 08:59 in Kolkata
    assert (await scheduler.tick()).posted == 0
    clock.set(datetime(2026, 5, 2, 12, tzinfo=UTC))  # back at 17:30 local, same day
    assert (await scheduler.tick()).posted == 1
    assert (await scheduler.tick()).posted == 0
    clock.set(datetime(2026, 5, 2, 18, 31, tzinfo=UTC))  # 00:01 next local day, before 09:00
    assert (await scheduler.tick()).posted == 0
    await store.close()


async def test_schedule_set_after_todays_moment_starts_tomorrow(
    sample_catalog: Catalog
) -> None:
    clock = FakeClock(datetime(2026, 5, 1, 15, tzinfo=UTC))
    pub = recording_port(clock)
    store, scheduler = await boot(LoopDatabase(), sample_catalog, clock, pub, 1)
    status = await scheduler.service.daily.set(Chat("tg:-9"), "09:00", allowed=True)
    assert status.next_post == datetime(2026, 5, 2, 9, tzinfo=UTC)
    assert (await scheduler.tick()).posted == 0
    await store.close()


async def test_two_schedulers_on_one_database_post_once(
    sample_catalog: Catalog
) -> None:
    clock = FakeClock(datetime(2026, 5, 1, 6, tzinfo=UTC))
    pub = recording_port(clock)
    database = LoopDatabase()
    one, first = await boot(database, sample_catalog, clock, pub, 1)
    two, second = await boot(database, sample_catalog, clock, pub, 2)
    for key, at, tz in SCHEDULES:
        await first.service.daily.set(Chat(key), at, tz, allowed=True)
    for _ in range(6 * 24 * 3):  # three days in 10-minute steps, both processes racing
        clock.advance(minutes=10)
        await asyncio.gather(first.tick(), second.tick(), first.tick(), second.tick())
    per_day = Counter((q.chat_key, local_day(q.chat_key, at)) for q, at in posted(pub))
    assert max(per_day.values()) == 1
    for key in ZONES:
        days = sorted(d for (k, d) in per_day if k == key)
        assert len(days) >= 3 and (days[-1] - days[0]).days + 1 == len(days), key
    # each replaced daily question's summary shown once, by one of the two processes
    shown = Counter(s.post_id for s in pub.closed)
    assert max(shown.values()) == 1
    assert len(shown) == len(pub.sent) - len(SCHEDULES)
    await one.close()
    await two.close()


async def test_claimed_but_unpublished_day_is_posted_again(
    sample_catalog: Catalog
) -> None:
    clock = FakeClock(datetime(2026, 5, 1, 6, tzinfo=UTC))
    pub = recording_port(clock, failures=1)
    store, scheduler = await boot(LoopDatabase(), sample_catalog, clock, pub, 1)
    await scheduler.service.daily.set(Chat("tg:-9"), "07:00", allowed=True)
    clock.set(datetime(2026, 5, 1, 7, tzinfo=UTC))
    assert (await scheduler.tick()).posted == 0  # the platform failed after the claim
    clock.advance(minutes=1)
    assert (await scheduler.tick()).posted == 0  # not yet: another process may still be posting
    clock.advance(minutes=2)
    assert (await scheduler.tick()).posted == 1
    assert (await scheduler.tick()).posted == 0
    assert len(pub.sent) == 1
    await store.close()


class HeldPort(FakePort):
    """Sends to `held` chats wait until `go` is set; once `armed`, the next send to `slow` sets
    it and then waits until the held ones are sent and marked published."""

    def __init__(self, clock: FakeClock, held: set[str], slow: str) -> None:
        super().__init__("tg:", clock)
        self.held, self.slow, self.go = held, slow, asyncio.Event()
        self.armed = False

    async def send_question(self, question: ShownQuestion) -> None:
        if question.chat_key in self.held:
            await self.go.wait()
        elif question.chat_key == self.slow and self.armed and not self.go.is_set():
            self.go.set()
            assert self.service is not None
            for _ in range(500):  # until only this one is left unpublished
                left = await self.service.daily.unpublished(timedelta(0))
                if [q.chat_key for q in left] == [self.slow]:
                    break
                await asyncio.sleep(0.01)
        await super().send_question(question)


async def test_a_question_the_fan_out_finishes_during_a_re_post_is_not_sent_again(
    sample_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The re-post walks a list taken before its (slow) sends; what the fan-out was sending
    when it was taken is the fan-out's, even if it is published by the time its turn comes."""
    monkeypatch.setattr(scheduler_module, "FANOUT_WAIT", 0.01)
    clock = FakeClock(datetime(2026, 5, 1, 6, tzinfo=UTC))
    pub = HeldPort(clock, held={"tg:-2", "tg:-3"}, slow="tg:-1")
    store, scheduler = await boot(LoopDatabase(), sample_catalog, clock, pub, 1)
    daily = scheduler.service.daily
    await daily.set(Chat("tg:-1"), "06:59", allowed=True)
    await daily.set(Chat("tg:-2"), "07:00", allowed=True)
    await daily.set(Chat("tg:-3"), "07:00", allowed=True)
    pub.fail_sends(ConnectionError("platform unreachable"))  # -1's first try, at 06:59
    clock.set(datetime(2026, 5, 1, 6, 59, tzinfo=UTC))
    assert (await scheduler.tick()).posted == 0
    clock.set(datetime(2026, 5, 1, 7, tzinfo=UTC))
    assert (await scheduler.tick()).posted == 0  # -2 and -3 held in the fan-out
    clock.advance(minutes=3)  # all three claimed more than REPUBLISH_AFTER ago
    pub.armed = True
    posted = [(await scheduler.tick()).posted]  # re-posts -1, during which -2 and -3 finish
    posted.append((await scheduler.tick()).posted)  # the fan-out's two, counted
    assert sorted(q.chat_key for q in pub.sent) == ["tg:-1", "tg:-2", "tg:-3"]
    assert sum(posted) == 3
    assert (await scheduler.tick()).posted == 0
    await store.close()


async def test_a_question_the_fan_out_finishes_while_a_re_post_reads_its_list_is_not_sent_again(
    sample_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fan-out publishes a question and lets its chat go while the re-post is reading
    the unpublished ones: the list has it, the fan-out's marks no longer do, and it is still
    the fan-out's."""
    monkeypatch.setattr(scheduler_module, "FANOUT_WAIT", 0.01)
    clock = FakeClock(datetime(2026, 5, 1, 7, tzinfo=UTC))
    pub = HeldPort(clock, held={"tg:-2"}, slow="none")
    store, scheduler = await boot(LoopDatabase(), sample_catalog, clock, pub, 1)
    daily = scheduler.service.daily
    await daily.set(Chat("tg:-2"), "07:00", allowed=True)
    assert (await scheduler.tick()).posted == 0  # held in the fan-out
    clock.advance(minutes=3)
    read = daily.unpublished

    async def slow_read(older: timedelta) -> list[ShownQuestion]:
        stale = await read(older)
        pub.go.set()  # the fan-out sends and publishes it now
        for _ in range(500):
            if not await read(timedelta(0)) and not scheduler._sending:
                break
            await asyncio.sleep(0.01)
        return stale

    monkeypatch.setattr(daily, "unpublished", slow_read)
    posted = [(await scheduler.tick()).posted for _ in range(3)]
    assert [q.chat_key for q in pub.sent] == ["tg:-2"]
    assert sum(posted) == 1
    await store.close()


async def test_republishing_backs_off_while_the_platform_refuses(
    sample_catalog: Catalog
) -> None:
    clock = FakeClock(datetime(2026, 5, 1, 6, tzinfo=UTC))
    pub = recording_port(clock, failures=4)
    store, scheduler = await boot(LoopDatabase(), sample_catalog, clock, pub, 1)
    await scheduler.service.daily.set(Chat("tg:-9"), "07:00", allowed=True)
    clock.set(datetime(2026, 5, 1, 7, tzinfo=UTC))
    await scheduler.tick()  # first attempt fails (failures 4 → 3)
    attempts = []
    for _ in range(60):  # an hour of ticks, one a minute
        clock.advance(minutes=1)
        before = pub.send_attempts
        await scheduler.tick()
        attempts.append(pub.send_attempts != before)
        if pub.sent:
            break
    assert sum(attempts) == 4  # retried after 2, 4, 8 and 16 minutes, not every tick
    assert len(pub.sent) == 1
    await store.close()


async def test_daily_pool_cycles_before_repeating(service: QuizService, clock: FakeClock) -> None:
    await service.daily.set(Chat("tg:-5"), "00:00", allowed=True)
    seen = []
    for _ in range(6):
        clock.advance(days=1)
        claimed = await service.daily.claim((await service.daily.schedules())[0])
        assert claimed is not None
        seen.append(claimed[0].question_id)
        # /quiz in between must not disturb the daily cycle
        async with service.asking.quiz(Chat("tg:-5"), None):
            pass
    assert sorted(seen[:3]) == sorted(seen[3:]) == ["s-one", "s-three", "s-two"]


async def test_bad_input_changes_nothing(service: QuizService) -> None:
    chat = Chat("tg:-6")
    await service.daily.set(chat, "08:00", "Asia/Dhaka", "sample", allowed=True)
    for args in (("25:00",), ("8am",), ("08:00", "Mars/Olympus"), ("08:00", None, "nope")):
        with pytest.raises((ScheduleError, UnknownQuiz)):
            await service.daily.set(chat, *args, allowed=True)
    status = await service.daily.status(chat)
    assert status is not None
    assert (status.schedule.at, status.schedule.tz, status.schedule.selector) == (
        time(8), "Asia/Dhaka", "sample")
    assert await service.daily_off(chat, allowed=True) is True
    assert await service.daily.status(chat) is None


def test_parsing() -> None:
    assert parse_time("9:05") == time(9, 5) and parse_time("23.59") == time(23, 59)
    assert parse_zone(None) == "UTC" and parse_zone("Asia/Kolkata") == "Asia/Kolkata"
    assert parse_zone(" asia/dhaka ") == "Asia/Dhaka"
    with pytest.raises(ScheduleError, match="time zone"):
        parse_zone("Mars/Olympus")
    with pytest.raises(ScheduleError, match="HH:MM"):
        parse_time("24:00")


def test_dst_gap_and_fold_give_one_moment() -> None:
    ny = Schedule("tg:-1", time(2, 30), "America/New_York")
    gap = ny.moment(date(2026, 3, 8))  # 02:30 does not exist that night
    assert gap.astimezone(ny.zone).hour == 3
    london = Schedule("tg:-2", time(1, 30), "Europe/London")
    fold = london.moment(date(2026, 10, 25))  # 01:30 happens twice
    assert fold == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # the first, BST


def test_day_streaks() -> None:
    d = date(2026, 1, 10)
    days = [d, d + timedelta(1), d + timedelta(2), d + timedelta(5), d + timedelta(6)]
    assert day_streaks(days, d + timedelta(6)) == (2, 3)
    assert day_streaks(days, d + timedelta(7)) == (2, 3)  # today's may still be open
    assert day_streaks(days, d + timedelta(8)) == (0, 3)  # a missed day breaks it
    assert day_streaks([], None) == (0, 0)


async def test_day_streaks_across_zones_in_stats(service: QuizService, clock: FakeClock) -> None:
    ada, bo = Person("tg:1", "Ada"), Person("tg:2", "Bo")
    kolkata, new_york = Chat("tg:-7"), Chat("tg:-8")
    clock.set(datetime(2026, 6, 1, 1, tzinfo=UTC))
    # 19:00 UTC the day before
    await service.daily.set(kolkata, "00:30", "Asia/Kolkata", allowed=True)
    await service.daily.set(new_york, "20:00", "America/New_York", allowed=True)  # 00:00 UTC
    # per round: Ada in Kolkata, Bo in New York; None = did not answer
    plan: dict[str, list[bool | None]] = {
        ada.key: [True, True, None, True, True],
        bo.key: [True, True, True, False, True],
    }
    for day in range(5):
        clock.set(datetime(2026, 6, 2 + day, 1, tzinfo=UTC))
        for schedule in await service.daily.schedules():
            claimed = await service.daily.claim(schedule)
            assert claimed is not None
            q = claimed[0]
            person = ada if schedule.chat_key == kolkata.key else bo
            right = plan[person.key][day]
            if right is not None:
                await service.answer(q.post_id, person, q.correct if right else (q.correct + 1) % 3)
    ada_stats, bo_stats = await service.boards.stats(ada), await service.boards.stats(bo)
    assert (ada_stats.day_streak, ada_stats.best_day_streak) == (2, 2)  # missed a day
    assert (bo_stats.day_streak, bo_stats.best_day_streak) == (1, 3)  # wrong on a day
    board = await service.leaderboard(None, person=ada)
    assert {r.name: r.day_streak for r in board.rows} == {"Ada": 2, "Bo": 1}
    assert board.me is not None and board.me.day_streak == 2
    text = render.leaderboard_text(board, translator("en"))
    assert "Ada — 4/4 right" in text and "🔥 2-day streak" in text
    assert text.count("🔥") == 1  # a one-day run is not a streak to show


def test_schedule_errors_can_be_said_in_the_readers_language() -> None:
    with pytest.raises(ScheduleError) as info:
        parse_zone("Mars/Olympus")
    error = info.value
    assert str(error).startswith("“Mars/Olympus” is not a time zone")
    bengali = translator("bn").gettext(error.template, **error.values)
    assert "Mars/Olympus" in bengali and bengali != str(error)
