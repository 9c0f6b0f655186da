"""Assignments in the core, with no platform (core/assignments.py): who may assign, what a
deadline is in its time zone (DST included), a member's private run of the assignment's set,
the reminder to those who started and have not finished, and the deadline's one summary,
each once across two processes on one store, retried after a failure. Time moves only
through the FakeClock and the scheduler's tick()."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import pytest

from bot.content import Catalog
from bot.core.assignments import (
    AssignmentError,
    Taken,
    deadline_of,
    link_payload,
    parse_day,
    read_payload,
    remind_at,
)
from bot.core.delivery import SUMMARY_GRACE
from bot.core.errors import BadZone, NotAllowed, ScheduleError, UnknownQuiz
from bot.core.models import Chat, Person
from bot.core.ports import TryLater
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.ports import FakePort
from tests.sqlite_in_loop import LoopDatabase, LoopStorage

pytestmark = pytest.mark.memory_store

GROUP = Chat("tg:-100", "Study group")
OTHER = Chat("tg:-200", "Other group")
ADMIN, ADA, BO, CY = (Person("tg:9", "Admin"), Person("tg:1", "Ada"), Person("tg:2", "Bo"),
                      Person("tg:3", "Cy"))
# the conftest clock starts 2026-03-01 12:00 UTC
GRACE = SUMMARY_GRACE.total_seconds() + 1


def alone(person: Person) -> Chat:
    return Chat(person.key, person.name, is_private=True)  # Telegram: the key is theirs


class NoticePort(FakePort):
    """A FakePort that also posts plain messages in a chat (the deadline's summary)."""

    def __init__(self, prefix: str, clock: FakeClock) -> None:
        super().__init__(prefix, clock)
        self.notices: list[tuple[str, str]] = []
        self.notice_failures: list[BaseException] = []

    async def send_notice(self, chat_key: str, text: str) -> None:
        if self.notice_failures:
            raise self.notice_failures.pop(0)
        self.notices.append((chat_key, text))


@dataclass
class Process:
    service: QuizService
    port: NoticePort
    scheduler: Scheduler


@pytest.fixture
async def processes(sample_catalog: Catalog, clock: FakeClock) -> list[Process]:
    """Two bot processes on one database."""
    database = LoopDatabase()
    made = []
    for seed in (1, 2):
        storage = LoopStorage(database)
        await storage.open()
        service = QuizService(sample_catalog, storage, clock, random.Random(seed))
        port = NoticePort("tg:", clock)
        port.attach(service)
        made.append(Process(service, port, Scheduler(service)))
    return made


async def tick_all(processes: list[Process]) -> None:
    for process in processes:
        await process.scheduler.tick()


async def finish(service: QuizService, taken: Taken, person: Person, right: int) -> None:
    """Answer every question of the run, the first `right` of them right."""
    question = taken.question
    for n in range(question.total or 1):
        option = question.correct if n < right else (question.correct + 1) % 3
        result = await service.answer(question.post_id, person, option)
        assert result.accepted
        if result.next_question is None:
            return
        question = result.next_question


# deadlines ---------------------------------------------------------------------------------
def test_a_deadline_is_its_zone_s_wall_clock_across_daylight_saving() -> None:
    # Berlin moves its clocks forward on 2026-03-29 at 02:00 (UTC+1 to UTC+2)
    assert deadline_of(date(2026, 3, 28), time(12), "Europe/Berlin") == \
        datetime(2026, 3, 28, 11, tzinfo=UTC)
    assert deadline_of(date(2026, 3, 29), time(12), "Europe/Berlin") == \
        datetime(2026, 3, 29, 10, tzinfo=UTC)
    # 02:30 does not happen that night: read with the offset before the change
    assert deadline_of(date(2026, 3, 29), time(2, 30), "Europe/Berlin") == \
        datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    # and back on 2026-10-25: 02:30 happens twice, the first is meant
    assert deadline_of(date(2026, 10, 25), time(2, 30), "Europe/Berlin") == \
        datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    assert deadline_of(date(2026, 12, 24), time(18), "Asia/Kolkata") == \
        datetime(2026, 12, 24, 12, 30, tzinfo=UTC)


def test_dates_are_iso_or_as_the_reader_s_language_writes_them() -> None:
    assert parse_day("2026-12-24", "en") == date(2026, 12, 24)
    assert parse_day("12/24/2026", "en") == date(2026, 12, 24)
    assert parse_day("24/12/2026", "bn") == date(2026, 12, 24)
    for bad in ("friday", "2026-13-40", "5", "31/02/2027"):
        with pytest.raises(AssignmentError):
            parse_day(bad, "en")


def test_the_reminder_comes_a_day_before_or_at_half_the_time_given() -> None:
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    assert remind_at(now + timedelta(days=5), now) == now + timedelta(days=4)
    assert remind_at(now + timedelta(hours=8), now) == now + timedelta(hours=4)


def test_a_link_s_payload_reads_back_and_nothing_else_does() -> None:
    assert read_payload("assign-12-abc") == (12, "abc")
    for other in ("sample", "assign-x-abc", "assign-12", "assign--abc"):
        assert read_payload(other) is None


# assigning -----------------------------------------------------------------------------------
async def test_only_admins_assign_and_a_bad_request_changes_nothing(
    service: QuizService, clock: FakeClock
) -> None:
    assignments = service.assignments
    with pytest.raises(NotAllowed):
        await assignments.assign(GROUP, "sample", "2026-03-05", allowed=False, by=ADA)
    with pytest.raises(UnknownQuiz):
        await assignments.assign(GROUP, "nope", "2026-03-05", allowed=True)
    with pytest.raises(AssignmentError):
        await assignments.assign(GROUP, "sample", "someday", allowed=True)
    with pytest.raises(AssignmentError):  # past
        await assignments.assign(GROUP, "sample", "2026-03-01", "11:00", allowed=True)
    with pytest.raises(AssignmentError):  # more than a year away
        await assignments.assign(GROUP, "sample", "2027-06-01", allowed=True)
    with pytest.raises(ScheduleError):
        await assignments.assign(GROUP, "sample", "2026-03-05", "25:00", allowed=True)
    with pytest.raises(BadZone):
        await assignments.assign(GROUP, "sample", "2026-03-05", "18:00", "Mars/Base",
                                 allowed=True)
    with pytest.raises(AssignmentError):  # a private chat has nobody to give it to
        await assignments.assign(alone(ADA), "sample", "2026-03-05", allowed=True)
    assert await assignments.listed(GROUP) == []
    record = await assignments.assign(GROUP, "Sample", "2026-03-05", "18:00", "asia/kolkata",
                                      allowed=True, by=ADMIN)
    assert (record.new.quizzes, record.new.total, record.new.tz) == (("sample",), 3,
                                                                      "Asia/Kolkata")
    assert record.new.deadline == datetime(2026, 3, 5, 12, 30, tzinfo=UTC)
    assert record.new.remind_at == record.new.deadline - timedelta(days=1)
    assert [r.id for r in await assignments.listed(GROUP)] == [record.id]
    assert await assignments.listed(OTHER) == []
    # a topic names its quizzes; a day alone ends at 23:59
    topic = await assignments.assign(GROUP, "testing", "2026-03-02", allowed=True)
    assert topic.new.quizzes == ("sample",)
    assert topic.new.deadline == datetime(2026, 3, 2, 23, 59, tzinfo=UTC)
    assert [r.id for r in await assignments.listed(GROUP)] == [topic.id, record.id]


async def test_cancelling_is_for_admins_and_only_of_the_chat_s_own(
    service: QuizService, clock: FakeClock
) -> None:
    assignments = service.assignments
    record = await assignments.assign(GROUP, "sample", "2026-03-05", allowed=True)
    with pytest.raises(NotAllowed):
        await assignments.cancel(GROUP, str(record.id), allowed=False)
    for wrong in ("x", "999", str(record.id)):
        chat = OTHER if wrong == str(record.id) else GROUP
        with pytest.raises(AssignmentError):
            await assignments.cancel(chat, wrong, allowed=True)
    assert [r.id for r in await assignments.listed(GROUP)] == [record.id]
    await assignments.cancel(GROUP, f"#{record.id}", allowed=True)
    assert await assignments.listed(GROUP) == []
    with pytest.raises(AssignmentError):  # once
        await assignments.cancel(GROUP, str(record.id), allowed=True)
    with pytest.raises(AssignmentError):  # and nobody starts it any more
        await assignments.take(record.id, ADA, alone(ADA), token=record.new.token)


# taking it -----------------------------------------------------------------------------------
async def test_a_member_takes_it_privately_and_goes_on_where_they_stopped(
    service: QuizService, clock: FakeClock
) -> None:
    assignments = service.assignments
    record = await assignments.assign(GROUP, "sample", "2026-03-05", allowed=True)
    with pytest.raises(AssignmentError):  # a guessed link
        await assignments.take(record.id, ADA, alone(ADA), token="guess")
    with pytest.raises(AssignmentError):  # a button from another chat
        await assignments.take(record.id, ADA, alone(ADA), from_chat=OTHER.key)
    assert read_payload(link_payload(record)) == (record.id, record.new.token)
    taken = await assignments.take(record.id, ADA, alone(ADA), token=record.new.token)
    assert taken.question.chat_key == ADA.key
    assert (taken.question.number, taken.question.total) == (1, 3)
    assert (taken.quiz_number, taken.quizzes) == (1, 1)
    first = await service.answer(taken.question.post_id, ADA, taken.question.correct)
    assert first.next_question is not None
    # a /quiz of the same quiz goes on with the assignment's run
    async with service.asking.quiz(alone(ADA), ADA, "sample", run=True) as shown:
        assert (shown.number, shown.total) == (2, 3)
    # another quiz ends that run (Runs.start); taken up again: a run of the two left
    run = await service.storage.active_run(ADA.key, ADA.key)
    assert run is not None
    await service.storage.finish_run(run.id, clock.now())
    again = await assignments.take(record.id, ADA, alone(ADA), from_chat=GROUP.key)
    assert (again.question.number, again.question.total) == (1, 2)
    await finish(service, again, ADA, right=1)
    [progress] = await assignments.progress(record.id)
    assert (progress.person_key, progress.name, progress.answered, progress.right) == (
        ADA.key, "Ada", 3, 2)
    with pytest.raises(AssignmentError):  # finished
        await assignments.take(record.id, ADA, alone(ADA), token=record.new.token)
    clock.set(record.new.deadline)
    with pytest.raises(AssignmentError):  # over
        await assignments.take(record.id, BO, alone(BO), token=record.new.token)


# the reminder and the deadline's summary, each once --------------------------------------------
async def test_reminder_once_to_those_unfinished_and_one_summary_at_the_deadline(
    processes: list[Process], clock: FakeClock
) -> None:
    one, two = processes
    record = await one.service.assignments.assign(GROUP, "sample", "2026-03-03", "12:00",
                                                  allowed=True, by=ADMIN)
    token = record.new.token
    await finish(one.service, await one.service.assignments.take(
        record.id, ADA, alone(ADA), token=token), ADA, right=3)
    await finish(two.service, await two.service.assignments.take(
        record.id, BO, alone(BO), token=token), BO, right=2)
    started = await one.service.assignments.take(record.id, CY, alone(CY), token=token)
    assert (await one.service.answer(started.question.post_id, CY,
                                     started.question.correct)).accepted
    clock.set(record.new.remind_at - timedelta(seconds=1))
    await tick_all(processes)
    assert one.port.private == two.port.private == []
    clock.set(record.new.remind_at)
    for _ in range(3):
        await tick_all(processes)
        clock.advance(GRACE)
    reminders = one.port.private + two.port.private
    assert [key for key, _ in reminders] == [CY.key]  # Ada and Bo finished; Cy once
    assert "1 of its 3" in reminders[0][1]
    assert one.port.notices == two.port.notices == []
    clock.set(record.new.deadline)
    for _ in range(3):
        await tick_all(processes)
        clock.advance(GRACE)
    notices = one.port.notices + two.port.notices
    assert len(notices) == 1
    chat_key, text = notices[0]
    assert chat_key == GROUP.key
    assert "2 of 3 who started it finished" in text
    assert "Finished: Ada, Bo" in text
    assert "Average of those who finished: 83% right" in text  # (3 + 2) right of 2 x 3
    assert "Hardest question: “Pick the last letter.” (50% right)" in text
    assert await one.service.assignments.listed(GROUP) == []


async def test_a_summary_refused_is_retried_and_one_left_by_a_dead_process_is_sent_once(
    processes: list[Process], clock: FakeClock
) -> None:
    one, two = processes
    record = await one.service.assignments.assign(GROUP, "sample", "2026-03-01", "18:00",
                                                  allowed=True)
    clock.set(record.new.deadline)
    one.port.notice_failures.append(TryLater("flood"))
    await one.scheduler.tick()  # claimed, then refused
    assert one.port.notices == []
    await two.scheduler.tick()  # claimed by the other: not this one's yet
    assert two.port.notices == []
    clock.advance(GRACE + 30)
    await tick_all(processes)
    clock.advance(GRACE + 60)
    await tick_all(processes)
    assert len(one.port.notices + two.port.notices) == 1
    # a process that claimed a summary and died before sending it: another one sends it
    before = len(one.port.notices + two.port.notices)
    late = await one.service.assignments.assign(GROUP, "sample", "2026-03-02", "09:00",
                                                allowed=True)
    clock.set(late.new.deadline)
    assert await one.service.storage.claim_assignment_summary(late.id, clock.now())
    await two.scheduler.tick()
    assert len(one.port.notices + two.port.notices) == before  # the claimer's grace
    clock.advance(GRACE)
    for _ in range(2):
        await tick_all(processes)
    assert len(one.port.notices + two.port.notices) == before + 1


async def test_a_cancelled_assignment_reminds_nobody_and_has_no_summary(
    processes: list[Process], clock: FakeClock
) -> None:
    one, _two = processes
    record = await one.service.assignments.assign(GROUP, "sample", "2026-03-01", "20:00",
                                                  allowed=True)
    started = await one.service.assignments.take(record.id, ADA, alone(ADA),
                                                 token=record.new.token)
    assert (started.question.number, started.question.total) == (1, 3)
    await one.service.assignments.cancel(GROUP, str(record.id), allowed=True)
    for moment in (record.new.remind_at, record.new.deadline):
        clock.set(moment)
        await tick_all(processes)
    assert one.port.private == [] and one.port.notices == []
