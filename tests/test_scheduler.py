"""The one loop that drives time (core/scheduler.py) and the daily question's rules, through a
FakePort: questions closed when their time is up, daily questions once per local day, who may
change a schedule, a chat that is gone. Time moves only through the FakeClock and tick()."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest

from bot.core.errors import NotAllowed
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.ports import TryLater
from bot.core.scheduler import Scheduler, Tick
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.ports import FakePort

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
OTHER = Chat("tg:-200", "Other group")
ADA, BO = Person("tg:1", "Ada"), Person("tg:2", "Bo")
# 09:00 in Kolkata is 03:30 UTC; the conftest clock starts 2026-03-01 12:00 UTC
KOLKATA_9AM = datetime(2026, 3, 2, 3, 30, tzinfo=UTC)


@pytest.fixture
def port(service: QuizService) -> FakePort:
    return FakePort("tg:").attach(service)


@pytest.fixture
def scheduler(service: QuizService) -> Scheduler:
    return Scheduler(service)


async def show(service: QuizService, port: FakePort, chat: Chat, person: Person) -> ShownQuestion:
    async with service.asking.quiz(chat, person) as question:
        await port.send_question(question)
    return question


async def open_ids(service: QuizService, chat: Chat, kind: str | None = None) -> list[int]:
    return [p.id for p in await service.storage.open_posts(chat.key, kind=kind)]


# questions whose time is up ------------------------------------------------------------------
async def test_tick_closes_due_questions_and_delivers_their_summaries_at_once(
    service: QuizService, port: FakePort, scheduler: Scheduler, clock: FakeClock
) -> None:
    q = await show(service, port, GROUP, ADA)
    other = await show(service, port, OTHER, ADA)
    assert q.closes_at == clock.now() + timedelta(minutes=10)
    assert (await service.answer(q.post_id, BO, q.correct)).accepted
    clock.advance(minutes=9, seconds=59)
    assert await scheduler.tick() == Tick(posted=0, closed=0)
    assert port.closed == []
    clock.advance(1)
    assert await scheduler.tick() == Tick(posted=0, closed=2)
    # in that same tick, each with its own numbers
    assert sorted(s.post_id for s in port.closed) == sorted([q.post_id, other.post_id])
    [summary] = port.summaries_for(GROUP.key)
    assert (summary.answered, summary.right) == (1, 1)
    assert summary.refs == ("tg:msg:1",)
    assert await scheduler.tick() == Tick(posted=0, closed=0)
    clock.advance(hours=1)
    await scheduler.tick()
    assert len(port.closed) == 2  # once each
    late = await service.answer(q.post_id, ADA, q.correct)
    assert not late.accepted


async def test_private_questions_have_no_time_limit(
    service: QuizService, port: FakePort, scheduler: Scheduler, clock: FakeClock
) -> None:
    alone = Chat(ADA.key, "Ada", is_private=True)
    single = await show(service, port, alone, ADA)
    assert single.closes_at is None
    clock.advance(days=2)
    assert (await scheduler.tick()).closed == 0
    assert port.closed == [] and await open_ids(service, alone) == [single.post_id]


# daily questions -----------------------------------------------------------------------------
async def test_daily_question_once_per_local_day(
    service: QuizService, port: FakePort, scheduler: Scheduler, clock: FakeClock
) -> None:
    await service.daily.set(GROUP, "09:00", "Asia/Kolkata", allowed=True)
    clock.set(KOLKATA_9AM - timedelta(minutes=1))
    assert (await scheduler.tick()).posted == 0
    clock.set(KOLKATA_9AM)
    assert (await scheduler.tick()).posted == 1
    [first] = port.sent
    for _ in range(23):  # the rest of the local day, hour by hour
        clock.advance(hours=1)
        assert (await scheduler.tick()).posted == 0
    assert port.sent == [first] and port.closed == []  # open until the next one
    clock.set(KOLKATA_9AM + timedelta(days=1))
    assert (await scheduler.tick()).posted == 1
    second = port.sent[-1]
    assert second.post_id != first.post_id
    # yesterday's question closed with its summary, shown before today's question
    assert port.events[-2:] == [("closed", first.post_id), ("sent", second.post_id)]
    assert await open_ids(service, GROUP, "daily") == [second.post_id]


async def test_daily_question_with_an_open_time_closes_on_time(
    service: QuizService, port: FakePort, scheduler: Scheduler, clock: FakeClock
) -> None:
    await service.daily.set(GROUP, "09:00", "Asia/Kolkata", open_minutes=30, allowed=True)
    clock.set(KOLKATA_9AM)
    await scheduler.tick()
    [daily] = port.sent
    assert daily.closes_at == KOLKATA_9AM + timedelta(minutes=30)
    clock.advance(minutes=30)
    assert await scheduler.tick() == Tick(posted=0, closed=1)
    assert [s.post_id for s in port.closed] == [daily.post_id]


async def test_a_daily_post_to_a_chat_that_is_gone_drops_its_schedule(
    service: QuizService, port: FakePort, scheduler: Scheduler, clock: FakeClock
) -> None:
    await service.daily.set(GROUP, "09:00", "Asia/Kolkata", allowed=True)
    await service.daily.set(OTHER, "09:00", "Asia/Kolkata", allowed=True)
    port.gone.add(GROUP.key)
    clock.set(KOLKATA_9AM)
    assert (await scheduler.tick()).posted == 1  # OTHER's
    assert await service.daily.status(GROUP) is None
    assert await service.daily.status(OTHER) is not None
    assert [q.chat_key for q in port.sent] == [OTHER.key]
    attempts = port.send_attempts
    for _ in range(3):  # never tried again: not re-posted, not the next day
        clock.advance(days=1)
        await scheduler.tick()
    assert port.send_attempts == attempts + 3  # OTHER's three days only
    assert all(q.chat_key == OTHER.key for q in port.sent)
    assert await open_ids(service, GROUP) == []  # its claimed question was closed quietly
    assert port.summaries_for(GROUP.key) == []


async def test_a_daily_post_that_must_wait_is_posted_again(
    service: QuizService, port: FakePort, scheduler: Scheduler, clock: FakeClock
) -> None:
    await service.daily.set(GROUP, "09:00", "Asia/Kolkata", allowed=True)
    port.fail_sends(TryLater("flood wait", retry_after=timedelta(seconds=10)))
    clock.set(KOLKATA_9AM)
    assert (await scheduler.tick()).posted == 0
    assert await service.daily.status(GROUP) is not None  # a transient failure drops nothing
    clock.advance(minutes=2)
    assert (await scheduler.tick()).posted == 1
    assert len(port.sent) == 1 and port.send_attempts == 2


async def test_a_platform_not_running_here_keeps_its_daily_question(
    service: QuizService, port: FakePort, scheduler: Scheduler, clock: FakeClock
) -> None:
    server = Chat("dc:5", "general")
    await service.daily.set(server, "09:00", "Asia/Kolkata", allowed=True)
    clock.set(KOLKATA_9AM)
    assert (await scheduler.tick()).posted == 0  # not claimed by a process without Discord
    clock.advance(hours=3)
    discord = FakePort("dc:").attach(service)
    assert (await scheduler.tick()).posted == 1  # posted later that same local day
    assert [q.chat_key for q in discord.sent] == [server.key] and port.sent == []


# who may change the daily question -----------------------------------------------------------
async def test_a_refused_daily_change_changes_nothing(
    service: QuizService, port: FakePort, scheduler: Scheduler, clock: FakeClock
) -> None:
    with pytest.raises(NotAllowed):
        await service.daily.set(GROUP, "09:00", allowed=False)
    assert await service.daily.status(GROUP) is None
    assert await service.daily.set(GROUP, "09:00", "Asia/Kolkata", "basics", allowed=True)
    with pytest.raises(NotAllowed):
        await service.daily.set(GROUP, "10:00", "Asia/Dhaka", allowed=False, by=BO)
    with pytest.raises(NotAllowed):
        await service.daily.set(GROUP, "not a time", allowed=False)  # refused first
    clock.set(KOLKATA_9AM)
    await scheduler.tick()
    [daily] = port.sent
    with pytest.raises(NotAllowed):
        await service.daily_off(GROUP, allowed=False)
    status = await service.daily.status(GROUP)
    assert status is not None
    assert (status.schedule.at, status.schedule.tz, status.schedule.selector) == (
        time(9), "Asia/Kolkata", "basics")
    assert await open_ids(service, GROUP, "daily") == [daily.post_id]  # still open
    assert port.closed == []


async def test_daily_off_closes_its_open_question_with_its_summary(
    service: QuizService, port: FakePort, scheduler: Scheduler, clock: FakeClock
) -> None:
    await service.daily.set(GROUP, "09:00", "Asia/Kolkata", allowed=True)
    clock.set(KOLKATA_9AM)
    await scheduler.tick()
    [daily] = port.sent
    quiz = await show(service, port, GROUP, ADA)
    assert (await service.answer(daily.post_id, BO, daily.correct)).accepted
    assert await service.daily_off(GROUP, allowed=True) is True
    [summary] = port.closed  # at once, not on some later tick
    assert summary.post_id == daily.post_id and (summary.answered, summary.right) == (1, 1)
    assert await service.daily.status(GROUP) is None
    assert await open_ids(service, GROUP) == [quiz.post_id]  # a /quiz question is not its
    assert await service.daily_off(GROUP, allowed=True) is False  # nothing left to turn off
    clock.advance(days=1)
    assert (await scheduler.tick()).posted == 0
    assert [q.post_id for q in port.sent] == [daily.post_id, quiz.post_id]
