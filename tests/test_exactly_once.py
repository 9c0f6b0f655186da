"""Exactly once in the core, with no platform: round summaries and review reminders are due
from when they were produced until their platform confirmed them, delivered under a lease by
whichever process gets there (two processes on one store here), retried with backoff after
a transient failure, given up when the chat is gone; a process that died between producing
and sending leaves them to another, which sends them once. Commands: a redelivered command
runs once through the facade. (Through the platforms and kill -9: tests/telegram_e2e.)"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from bot.content import Catalog
from bot.core.delivery import QUESTION_GRACE, SUMMARY_GRACE
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.ports import AlreadyHandled, TryLater, command_key
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.ports import FakePort
from tests.sqlite_in_loop import LoopDatabase, LoopStorage

GROUP = Chat("tg:-100", "Study group")
ADA, BO = Person("tg:1", "Ada"), Person("tg:2", "Bo")
KOLKATA_9AM = datetime(2026, 3, 2, 3, 30, tzinfo=UTC)
GRACE = SUMMARY_GRACE.total_seconds() + 1  # past the time another process is left to send


@dataclass
class Process:
    """One bot process: its own core, port and scheduler on the shared store."""

    service: QuizService
    port: FakePort
    scheduler: Scheduler


@pytest.fixture
async def processes(sample_catalog: Catalog, clock: FakeClock) -> list[Process]:
    database = LoopDatabase()
    made = []
    for seed in (1, 2):
        storage = LoopStorage(database)
        await storage.open()
        service = QuizService(sample_catalog, storage, clock, random.Random(seed),
                              question_time=timedelta(minutes=5))
        made.append(Process(service, FakePort("tg:", clock).attach(service), Scheduler(service)))
    return made


async def tick_all(processes: list[Process]) -> None:
    for process in processes:
        await process.scheduler.tick()


async def round_of_two(process: Process, clock: FakeClock) -> ShownQuestion:
    async with process.service.asking.quiz(GROUP, ADA, None, count=2) as question:
        await process.port.send_question(question)
    return question


async def last_question_closed(processes: list[Process], clock: FakeClock) -> None:
    """Close the round's first question (its second is asked) and then its second."""
    seconds = (await processes[0].service.chat_settings.get(GROUP.key)).question_seconds + 1
    for _ in range(2):
        clock.advance(seconds)
        await processes[0].scheduler.tick()


def rounds_shown(processes: list[Process]) -> list[int]:
    return [s.round_id for p in processes for s in p.port.rounds]


async def test_a_round_summary_refused_is_retried_and_shown_once(
    processes: list[Process], clock: FakeClock
) -> None:
    first, second = processes
    await round_of_two(first, clock)
    first.port.fail_rounds(TryLater("flood"), ConnectionError("down"))
    second.port.fail_rounds(ConnectionError("down"))
    await last_question_closed(processes, clock)  # the round ends: its summary is refused
    assert rounds_shown(processes) == [] and first.port.failures_left == 1
    await tick_all(processes)  # the backoff runs; the other leaves it to its finisher
    assert rounds_shown(processes) == [] and first.port.failures_left == 1
    for _ in range(6):
        clock.advance(GRACE)
        await tick_all(processes)
    assert first.port.failures_left + second.port.failures_left == 0  # tried again, and
    assert len(rounds_shown(processes)) == 1  # shown once


async def test_a_round_summary_left_by_a_process_that_died_is_shown_once_by_another(
    processes: list[Process], clock: FakeClock
) -> None:
    first, second = processes
    await round_of_two(first, clock)
    seconds = (await first.service.chat_settings.get(GROUP.key)).question_seconds + 1
    clock.advance(seconds)
    await first.scheduler.tick()  # the first question closes, the second is asked
    clock.advance(seconds)
    # the first process closes the last question, ends the round and dies before sending
    # the round's summary
    await first.service.questions.close_due()
    [ended] = (await first.service.rounds.advance())[1]
    await second.scheduler.tick()  # within the grace: the first might still be sending it
    assert rounds_shown(processes) == []
    clock.advance(GRACE)
    await second.scheduler.tick()
    await second.scheduler.tick()
    assert [s.round_id for s in second.port.rounds] == [ended.round_id]
    clock.advance(minutes=5)
    await tick_all(processes)
    assert rounds_shown(processes) == [ended.round_id]


async def test_a_round_question_asked_by_a_process_that_died_is_sent_once_by_another(
    processes: list[Process], clock: FakeClock
) -> None:
    first, second = processes
    await round_of_two(first, clock)
    clock.advance((await first.service.chat_settings.get(GROUP.key)).question_seconds + 1)
    await first.service.questions.close_due()  # the first question closes, and the first
    [asked], _ = await first.service.rounds.advance()  # process asks the next one and dies
    await second.scheduler.tick()  # within the grace: its asker might be sending it now
    assert second.port.sent == []
    clock.advance(QUESTION_GRACE.total_seconds() + 1)
    for _ in range(3):
        await second.scheduler.tick()
        clock.advance(seconds=2)
    assert [q.post_id for q in second.port.sent] == [asked.post_id]
    await tick_all(processes)  # the first, restarted, finds it sent
    assert asked.post_id not in {q.post_id for q in first.port.sent}


async def test_a_round_question_whose_send_started_is_not_sent_again(
    processes: list[Process], clock: FakeClock
) -> None:
    """Its process stored the send as started and died: the question may be in the chat."""
    first, second = processes
    await round_of_two(first, clock)
    clock.advance((await first.service.chat_settings.get(GROUP.key)).question_seconds + 1)
    await first.service.questions.close_due()
    [asked], _ = await first.service.rounds.advance()
    await first.service.delivery.question_sending(asked.post_id)  # ... and it dies sending it
    for _ in range(3):
        clock.advance(GRACE)
        await second.scheduler.tick()
    assert second.port.sent == []


async def reminder_due(process: Process) -> None:
    """Ada answered wrong (a card due), and wants her reminder at 09:00 in Kolkata."""
    question = await process.service.questions.post(GROUP, "sample", "s-one", "en")
    option = (question.correct + 1) % len(question.options)
    assert (await process.service.answer(question.post_id, ADA, option)).accepted
    await process.service.spaced.set_reminder(ADA, "09:00", "Asia/Kolkata")


async def test_a_reminder_claimed_by_a_process_that_died_is_sent_once_by_another(
    processes: list[Process], clock: FakeClock
) -> None:
    first, second = processes
    await reminder_due(first)
    clock.set(KOLKATA_9AM)
    [reminder] = await first.service.spaced.reminders()
    assert await first.service.spaced.claim(reminder) is not None  # ... and it dies here
    await second.scheduler.tick()
    assert second.port.private == []  # claimed a moment ago: its claimer may be sending it
    clock.advance(GRACE)
    await second.scheduler.tick()
    await second.scheduler.tick()
    assert [key for key, _ in second.port.private] == [ADA.key]
    clock.advance(minutes=5)
    await tick_all(processes)
    assert len(first.port.private) + len(second.port.private) == 1


async def test_a_reminder_that_failed_is_retried_with_backoff_and_sent_once(
    processes: list[Process], clock: FakeClock
) -> None:
    first, second = processes
    await reminder_due(first)
    clock.set(KOLKATA_9AM)
    first.port.fail_privates(ConnectionError("down"), TryLater("flood"))
    second.port.fail_privates(ConnectionError("down"))
    assert (await first.scheduler.tick()).reminded == 0
    await tick_all(processes)  # the backoff runs; the other leaves it to its claimer
    assert first.port.failures_left == 1 and second.port.failures_left == 1
    for _ in range(8):
        clock.advance(GRACE)
        await tick_all(processes)
    assert first.port.failures_left + second.port.failures_left == 0  # tried again, and
    assert len(first.port.private) + len(second.port.private) == 1  # sent once


async def test_a_reminder_to_someone_who_blocked_the_bot_is_given_up(
    processes: list[Process], clock: FakeClock
) -> None:
    first, second = processes
    await reminder_due(first)
    clock.set(KOLKATA_9AM)
    first.port.gone.add(ADA.key)
    second.port.gone.add(ADA.key)
    await first.scheduler.tick()
    clock.advance(minutes=5)
    await tick_all(processes)
    assert await first.service.spaced.unsent(timedelta(days=1), timedelta(0)) == []


async def test_a_command_delivered_twice_runs_once(processes: list[Process]) -> None:
    """/lang bn, delivered to one process and again to the other: one change, and the
    second delivery is told it was handled (the adapter sends nothing)."""
    first, second = processes
    with command_key("tg:77:1", first.service.clock.now()):
        assert await first.service.set_language(BO, "bn") == "bn"
    with pytest.raises(AlreadyHandled), command_key("tg:77:1", second.service.clock.now()):
        await second.service.set_language(BO, "hi")
    assert await second.service.locales.for_person(BO) == "bn"
    with command_key("tg:77:2", second.service.clock.now()):
        assert await second.service.claim_command()  # a send's key, claimed before it
    with command_key("tg:77:2", first.service.clock.now()):
        assert not await first.service.claim_command()


async def test_a_reminder_in_flight_when_its_process_died_is_not_sent_twice(
    processes: list[Process], sample_catalog: Catalog, clock: FakeClock
) -> None:
    """The first process claimed the day, took the lease, stored the send as started and
    died: the message may be at Telegram. Nobody sends it again (a crash loses a message in
    flight rather than doubling one); the day is done."""
    first, second = processes
    await reminder_due(first)
    clock.set(KOLKATA_9AM)
    [reminder] = await first.service.spaced.reminders()
    claimed = await first.service.spaced.claim(reminder)
    assert claimed is not None
    name, now = f"reminder:{ADA.key}:{claimed[0].isoformat()}", clock.now()
    storage = first.service.storage
    assert await storage.take_lease(name, first.service.holder, now + timedelta(minutes=10), now)
    await storage.delivery_step_done(name, "sent", now)  # ... and it dies here

    clock.advance(GRACE)
    await second.scheduler.tick()  # its lease still runs: the other waits
    assert await second.service.spaced.unsent(timedelta(days=1), timedelta(0)) != []
    # restarted under its instance name, the first process takes its lease up at once
    restarted = QuizService(sample_catalog, storage, clock, holder=first.service.holder)
    port = FakePort("tg:", clock).attach(restarted)
    await Scheduler(restarted).tick()
    assert port.private == second.port.private == []  # not sent twice
    assert await second.service.spaced.unsent(timedelta(days=1), timedelta(0)) == []
