"""Spaced review through the core with a FakeClock: answers become cards whose due dates move
as the fsrs package says, /review runs the due cards as the person's own questions, /stats
counts cards due and retention, and reminders go out once per local day, none when nothing
is due."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from fsrs import Card, Rating

from bot.core import scheduler as scheduler_module
from bot.core.deck import FAST, FSRS, SLOW, rating
from bot.core.errors import BadZone, ScheduleError
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.ports import ReviewAnswer
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.ports import FakePort

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
ADA, BO = Person("tg:1", "Ada"), Person("tg:2", "Bo")
ADA_DM = Chat("tg:1", "Ada", is_private=True)
BO_DM = Chat("tg:2", "Bo", is_private=True)
# 09:00 in Kolkata is 03:30 UTC; the clock starts 2026-03-01 12:00 UTC (17:30 in Kolkata)
KOLKATA_9AM = datetime(2026, 3, 2, 3, 30, tzinfo=UTC)


@pytest.fixture
def port(service: QuizService) -> FakePort:
    return FakePort("tg:").attach(service)


async def answer_in_group(
    service: QuizService, person: Person, question_id: str, *, right: bool
) -> ShownQuestion:
    question = await service.questions.post(GROUP, "sample", question_id, "en")  # a /quiz
    option = question.correct if right else (question.correct + 1) % len(question.options)
    assert (await service.answer(question.post_id, person, option)).accepted
    return question


def fsrs_due(*reviews: tuple[Rating, datetime]) -> datetime:
    """What the fsrs package itself says after these reviews of a new card."""
    card = Card(card_id=1, due=reviews[0][1])
    for grade, when in reviews:
        card, _ = FSRS.review_card(card, grade, when)
    return card.due


def review_answer(correct: bool, elapsed: timedelta, personal: bool = True) -> ReviewAnswer:
    return ReviewAnswer("sample", "s-one", correct, datetime(2026, 3, 1, tzinfo=UTC),
                        int(elapsed.total_seconds() * 1000), personal)


def test_the_rating_comes_from_right_or_wrong_and_the_time_taken() -> None:
    assert FAST == timedelta(seconds=10) and SLOW == timedelta(seconds=60)
    assert rating(review_answer(False, timedelta(seconds=3))) is Rating.Again
    assert rating(review_answer(True, timedelta(seconds=10))) is Rating.Easy
    assert rating(review_answer(True, timedelta(seconds=11))) is Rating.Good
    assert rating(review_answer(True, timedelta(seconds=60))) is Rating.Good
    assert rating(review_answer(True, timedelta(seconds=61))) is Rating.Hard
    # in a shared chat the time since the post is not thinking time
    assert rating(review_answer(True, timedelta(seconds=2), personal=False)) is Rating.Good
    assert rating(review_answer(True, timedelta(hours=5), personal=False)) is Rating.Good


async def test_due_dates_move_as_fsrs_says_and_review_runs_the_due_cards(
    service: QuizService, clock: FakeClock
) -> None:
    first = clock.now()
    await answer_in_group(service, ADA, "s-one", right=True)  # Good: a learning step away
    stats = await service.spaced.stats(ADA)
    assert (stats.cards, stats.due, stats.reviews, stats.retention) == (1, 0, 0, None)
    assert await service.spaced.start(ADA, ADA_DM, "en") is None  # nothing due yet

    due = fsrs_due((Rating.Good, first))
    clock.set(due - timedelta(seconds=1))
    assert (await service.spaced.stats(ADA)).due == 0
    clock.set(due)
    assert (await service.spaced.stats(ADA)).due == 1

    question = await service.spaced.start(ADA, ADA_DM, "en")
    assert question is not None and question.personal
    assert (question.chat_key, question.question_id) == (ADA_DM.key, "s-one")
    # asked again before answering: the same question, not a second one
    again = await service.spaced.start(ADA, ADA_DM, "en")
    assert again is not None and again.post_id == question.post_id
    # someone else cannot answer it
    assert not (await service.answer(question.post_id, BO, question.correct)).accepted

    clock.advance(seconds=4)  # right within 10 s on one's own question: Easy
    reviewed = clock.now()
    result = await service.answer(question.post_id, ADA, question.correct)
    assert result.accepted and result.correct and result.personal and result.explanation
    assert result.next_question is None  # nothing else is due

    due = fsrs_due((Rating.Good, first), (Rating.Easy, reviewed))
    assert due - reviewed >= timedelta(days=1)
    clock.set(due - timedelta(minutes=1))
    stats = await service.spaced.stats(ADA)
    assert (stats.cards, stats.due, stats.reviews, stats.right, stats.retention) == (
        1, 0, 1, 1, 1.0)
    clock.set(due)
    assert (await service.spaced.stats(ADA)).due == 1


async def test_each_review_answer_brings_the_next_due_card(
    service: QuizService, clock: FakeClock
) -> None:
    start = clock.now()
    await answer_in_group(service, ADA, "s-one", right=False)  # Again
    clock.advance(seconds=30)
    await answer_in_group(service, ADA, "s-two", right=False)
    clock.set(fsrs_due((Rating.Again, start + timedelta(seconds=30))))
    assert (await service.spaced.stats(ADA)).due == 2

    first = await service.spaced.start(ADA, ADA_DM, "en")
    assert first is not None and first.question_id == "s-one"  # the longest overdue first
    clock.advance(seconds=20)  # right, in 20 s: Good
    result = await service.answer(first.post_id, ADA, first.correct)
    assert result.accepted and result.next_question is not None
    second = result.next_question
    assert (second.question_id, second.chat_key, second.personal) == ("s-two", ADA_DM.key, True)

    clock.advance(seconds=5)
    wrong = (second.correct + 1) % len(second.options)
    result = await service.answer(second.post_id, ADA, wrong)
    assert result.accepted and not result.correct and result.next_question is None
    stats = await service.spaced.stats(ADA)
    assert (stats.cards, stats.due, stats.reviews, stats.right, stats.retention) == (
        2, 0, 2, 1, 0.5)


async def test_reminders_once_per_local_day_and_none_when_nothing_is_due(
    service: QuizService, clock: FakeClock, port: FakePort
) -> None:
    await answer_in_group(service, ADA, "s-one", right=False)
    reminder = await service.spaced.set_reminder(ADA, "09:00", "asia/kolkata")  # any case
    assert (reminder.at.strftime("%H:%M"), reminder.tz) == ("09:00", "Asia/Kolkata")
    await service.spaced.set_reminder(BO, "09:00", "Asia/Kolkata")  # Bo has no cards at all
    scheduler, other_process = Scheduler(service), Scheduler(service)

    # set after today's 09:00 in Kolkata: the first reminder is tomorrow's
    assert (await scheduler.tick()).reminded == 0
    clock.set(KOLKATA_9AM - timedelta(seconds=1))
    assert (await scheduler.tick()).reminded == 0
    clock.set(KOLKATA_9AM)
    assert (await scheduler.tick()).reminded == 1
    assert port.private == [
        ("tg:1", "📚 1 question is due for review. Send /review to go through it.")
    ]
    clock.advance(minutes=5)
    assert (await scheduler.tick()).reminded == 0
    assert (await other_process.tick()).reminded == 0  # the day is claimed in the database
    assert len(port.private) == 1

    # the next day: still due, one more; Bo never gets one
    clock.set(KOLKATA_9AM + timedelta(days=1))
    assert (await other_process.tick()).reminded == 1
    assert (await scheduler.tick()).reminded == 0
    assert [key for key, _ in port.private] == ["tg:1", "tg:1"]

    # reviewed: nothing due the next morning, so no message
    question = await service.spaced.start(ADA, ADA_DM, "en")
    assert question is not None
    clock.advance(seconds=5)  # Easy: out of the learning steps, days away
    assert (await service.answer(question.post_id, ADA, question.correct)).accepted
    due = (await service.spaced.deck(ADA.key)).cards[("sample", "s-one")].due
    clock.set(KOLKATA_9AM + timedelta(days=2))
    assert due > clock.now()
    assert (await scheduler.tick()).reminded == 0
    assert len(port.private) == 2

    # off: nothing any more, even with cards due
    assert await service.spaced.reminder_off(ADA)
    assert not await service.spaced.reminder_off(ADA)
    assert await service.spaced.reminder(ADA) is None
    clock.set(due + timedelta(days=3))
    assert (await scheduler.tick()).reminded == 0
    assert len(port.private) == 2


class SlowPrivatePort(FakePort):
    """Private messages wait until `go` is set, as thousands of reminders wait for the
    platform's rate."""

    def __init__(self) -> None:
        super().__init__("tg:")
        self.go = asyncio.Event()

    async def send_private(self, person_key: str, text: str) -> None:
        await self.go.wait()
        await super().send_private(person_key, text)


async def test_reminders_still_going_do_not_hold_the_tick(
    service: QuizService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Live countdowns and rounds move on each tick while the reminders go out at the
    platform's rate; no second fan-out starts meanwhile, and each is counted once."""
    monkeypatch.setattr(scheduler_module, "FANOUT_WAIT", 0.01)
    port = SlowPrivatePort()
    port.attach(service)
    await answer_in_group(service, ADA, "s-one", right=False)
    await service.spaced.set_reminder(ADA, "09:00", "Asia/Kolkata")
    scheduler = Scheduler(service)
    clock.set(KOLKATA_9AM)
    assert (await asyncio.wait_for(scheduler.tick(), 5)).reminded == 0  # still sending
    assert (await asyncio.wait_for(scheduler.tick(), 5)).reminded == 0
    port.go.set()
    reminded = [(await scheduler.tick()).reminded for _ in range(3)]
    assert sum(reminded) == 1 and len(port.private) == 1


async def test_a_bad_reminder_time_or_zone_changes_nothing(service: QuizService) -> None:
    with pytest.raises(ScheduleError):
        await service.spaced.set_reminder(ADA, "25:00")
    with pytest.raises(BadZone):
        await service.spaced.set_reminder(ADA, "09:00", "Mars/Olympus")
    assert await service.spaced.reminder(ADA) is None
    assert (await service.spaced.set_reminder(ADA, "7:05")).tz == "UTC"
