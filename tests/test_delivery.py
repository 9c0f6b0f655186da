"""Summaries onto the platforms (core/delivery.py) through a FakePort: a chat that is gone, a
platform asking to wait, concurrent deliverers, summaries refused earlier. Time moves only
through the FakeClock and Scheduler.tick()."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta

import pytest

from bot.content import Catalog
from bot.core.delivery import SUMMARY_WINDOW
from bot.core.models import Chat, Person, PostSummary, ShownQuestion
from bot.core.ports import ChatGone, TryLater
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.ports import FakePort
from tests.sqlite_in_loop import LoopDatabase, LoopStorage

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
OTHER = Chat("tg:-200", "Other group")
ADA, BO = Person("tg:1", "Ada"), Person("tg:2", "Bo")


@pytest.fixture
def port(service: QuizService) -> FakePort:
    return FakePort("tg:").attach(service)


async def show(
    service: QuizService, port: FakePort, chat: Chat, person: Person | None = ADA
) -> ShownQuestion:
    async with service.asking.quiz(chat, person) as question:
        await port.send_question(question)
    return question


async def closed_summary(service: QuizService, chat: Chat = GROUP) -> PostSummary:
    """A question closed by the core, its summary due and not delivered yet."""
    q = await service.questions.ask(chat, None, "en")
    summary = await service.questions.close(q.post_id)
    assert summary is not None
    return summary


async def pending_ids(service: QuizService) -> list[int]:
    return [s.post_id for s in await service.questions.unposted_summaries(SUMMARY_WINDOW)]


# a chat that is gone -------------------------------------------------------------------------
async def test_chat_gone_gives_the_summary_up_and_drops_the_schedule(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    await service.daily.set(GROUP, "09:00", allowed=True)
    await service.daily.set(OTHER, "09:00", allowed=True)
    first = await show(service, port, GROUP)
    other = await show(service, port, OTHER)
    port.gone.add(GROUP.key)  # the bot was removed from the group
    with pytest.raises(ChatGone):  # replacing the first fails: the chat is gone
        await show(service, port, GROUP, BO)  # (and so does sending the new question)
    assert port.close_attempts == 1 and port.closed == []
    assert await service.daily.status(GROUP) is None
    assert await service.daily.status(OTHER) is not None  # other chats keep theirs
    assert first.post_id not in await pending_ids(service)  # given up, not retried
    scheduler = Scheduler(service)
    for _ in range(3):
        clock.advance(minutes=10)  # past the grace and every backoff; /quiz time is up too
        await scheduler.tick()
    assert [s.post_id for s in port.closed] == [other.post_id]  # nothing more for GROUP
    assert all(s.chat_key != GROUP.key for s in await service.questions.unposted_summaries(
        SUMMARY_WINDOW))


async def test_chat_gone_closes_what_is_open_there_quietly(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    await service.daily.set(GROUP, "09:00", allowed=True)
    q = await show(service, port, GROUP)
    refused = await closed_summary(service, GROUP)
    await service.delivery.chat_gone(GROUP.key)
    assert await service.questions.live_count(q.post_id) is None  # closed
    assert await service.daily.status(GROUP) is None
    assert await pending_ids(service) == []  # neither summary will be tried again
    clock.advance(minutes=15)
    await Scheduler(service).tick()
    assert port.closed == [] and refused.post_id not in await pending_ids(service)


# a platform asking to wait -------------------------------------------------------------------
async def test_try_later_waits_for_retry_after(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    first = await show(service, port, GROUP)
    port.fail_closes(TryLater("flood wait", retry_after=timedelta(minutes=5)))
    await show(service, port, GROUP, BO)  # replaces the first: the platform says wait 5 min
    assert port.close_attempts == 1 and port.closed == []
    assert await pending_ids(service) == [first.post_id]
    scheduler = Scheduler(service)
    for seconds in (0, 31, 60, 120, 60):  # up to 4 min 31 s later: not before the delay
        clock.advance(seconds)
        await scheduler.tick()
        assert port.close_attempts == 1, seconds
    clock.advance(30)  # 5 min 1 s
    await scheduler.tick()
    assert port.close_attempts == 2 and [s.post_id for s in port.closed] == [first.post_id]
    assert await pending_ids(service) == []
    clock.advance(minutes=5)  # the second /quiz question's time is up: its own summary only
    await scheduler.tick()
    assert [s.post_id for s in port.closed].count(first.post_id) == 1


async def test_failures_back_off_and_doubles(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    summary = await closed_summary(service)
    port.fail_closes(TryLater("network"), ConnectionError("reset"), TryLater("network"))
    delivery = service.delivery
    assert await delivery.summary(summary) is False  # 1st failure: next try in 30 s
    attempts = []
    for _ in range(4 * 60):  # one pending() round a second for four minutes
        clock.advance(1)
        before = port.close_attempts
        await delivery.pending()
        attempts.append(port.close_attempts - before)
        if port.closed:
            break
    tried_at = [i + 1 for i, n in enumerate(attempts) if n]  # seconds after the first failure
    assert tried_at == [30, 90, 210]  # after 30 s, then 60 s, then 120 s
    assert [s.post_id for s in port.closed] == [summary.post_id]


# concurrent deliverers -----------------------------------------------------------------------
async def test_a_summary_is_delivered_once_by_concurrent_callers(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    summary = await closed_summary(service)
    clock.advance(31)  # pending() offers it too
    port.hold()
    delivery = service.delivery
    calls: list[asyncio.Task[bool | None]] = [
        asyncio.create_task(delivery.summary(summary)) for _ in range(3)
    ]
    calls += [asyncio.create_task(delivery.pending()) for _ in range(2)]
    calls.append(asyncio.create_task(delivery.summaries([summary, summary])))
    await port.closing.wait()
    port.release()
    results = await asyncio.gather(*calls)
    assert results[:3] == [True, False, False]  # the first caller delivers it
    assert [s.post_id for s in port.closed] == [summary.post_id]
    assert port.close_attempts == 1
    await delivery.pending()
    assert await delivery.summary(summary) is False  # delivered: never again
    assert len(port.closed) == 1 and await pending_ids(service) == []


async def test_two_processes_on_one_database_deliver_a_summary_once(
    sample_catalog: Catalog, clock: FakeClock
) -> None:
    database = LoopDatabase()
    async with LoopStorage(database) as one, LoopStorage(database) as two:
        a = QuizService(sample_catalog, one, clock, random.Random(1))
        b = QuizService(sample_catalog, two, clock, random.Random(2))
        port_a, port_b = FakePort("tg:").attach(a), FakePort("tg:").attach(b)
        first = await show(a, port_a, GROUP)
        port_a.hold()  # process A's platform is slow to take the summary
        replacing = asyncio.create_task(show(a, port_a, GROUP, BO))
        await port_a.closing.wait()
        clock.advance(5)
        await Scheduler(b).tick()  # process B's loop runs meanwhile
        assert port_b.close_attempts == 0
        port_a.release()
        await replacing
        clock.advance(60)
        await Scheduler(b).tick()
        await Scheduler(a).tick()
        shown = [s.post_id for s in port_a.closed + port_b.closed]
        assert shown == [first.post_id]


# summaries refused earlier -------------------------------------------------------------------
async def test_pending_offers_summaries_refused_earlier(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    first = await show(service, port, GROUP)
    port.fail_closes(ConnectionError("platform down"))
    await show(service, port, GROUP, BO)  # the summary of the first is refused
    assert port.closed == [] and await pending_ids(service) == [first.post_id]
    clock.advance(31)
    await service.delivery.pending()
    assert [s.post_id for s in port.closed] == [first.post_id]
    assert await pending_ids(service) == []


async def test_a_summary_refused_before_a_restart_is_delivered_after_it(
    sample_catalog: Catalog, clock: FakeClock
) -> None:
    database = LoopDatabase()
    async with LoopStorage(database) as store:
        before = QuizService(sample_catalog, store, clock, random.Random(1))
        port = FakePort("tg:").attach(before)
        first = await show(before, port, GROUP)
        port.fail_closes(TryLater("network"))
        await show(before, port, GROUP, BO)
    clock.advance(minutes=1)
    async with LoopStorage(database) as store:  # a new process
        after = QuizService(sample_catalog, store, clock, random.Random(2))
        port = FakePort("tg:").attach(after)
        await Scheduler(after).tick()
        [summary] = port.closed
        assert summary.post_id == first.post_id and summary.refs == ("tg:msg:1",)


async def test_a_platform_not_running_here_gets_its_summaries_when_it_connects(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    server = Chat("dc:5", "general")
    dq = await service.questions.ask(server, None, "en", open_for=timedelta(minutes=1))
    clock.advance(minutes=2)
    scheduler = Scheduler(service)
    assert (await scheduler.tick()).closed == 1  # closed on time, whichever platform
    assert port.closed == [] and await pending_ids(service) == [dq.post_id]
    discord = FakePort("dc:").attach(service)
    clock.advance(31)  # once no process that closed it can still be delivering it
    await scheduler.tick()
    assert [s.post_id for s in discord.closed] == [dq.post_id] and port.closed == []
    service.delivery.disconnect(discord)
    assert service.delivery.port_for("dc:5") is None
