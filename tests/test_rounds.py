"""Rounds in the core, with no platform: /quiz <quiz or tag> N in a shared chat asks N
questions in a row, each closing with its summary when its time is up; the scheduler's tick
asks the next one; a round ends with who got how many right; a new /quiz replaces it."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot.core.errors import MAX_ROUND, BadCount
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.ports import FakePort

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
ADA, BO = Person("tg:1", "Ada"), Person("tg:2", "Bo")
ALONE = Chat(ADA.key, "Ada", is_private=True)


@pytest.fixture
def port(service: QuizService, clock: FakeClock) -> FakePort:
    return FakePort("tg:", clock).attach(service)


async def start(
    service: QuizService, port: FakePort, chat: Chat, count: int | str | None,
    selector: str | None = None, person: Person | None = ADA,
) -> ShownQuestion:
    async with service.quiz(chat, person, selector, count=count) as question:
        await port.send_question(question)
    return question


async def time_up(service: QuizService, clock: FakeClock) -> None:
    clock.advance((await service.settings(GROUP)).question_seconds + 1)
    await Scheduler(service).tick()


async def test_a_round_asks_n_questions_one_after_another(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    first = await start(service, port, GROUP, 3)
    assert [q.post_id for q in port.sent] == [first.post_id]
    await Scheduler(service).tick()  # still open: nothing new
    assert len(port.sent) == 1
    await time_up(service, clock)
    assert len(port.sent) == 2 and [s.post_id for s in port.closed] == [first.post_id]
    # the summary came before the next question
    assert port.events[:3] == [("sent", first.post_id), ("closed", first.post_id),
                               ("sent", port.sent[1].post_id)]
    await time_up(service, clock)
    await time_up(service, clock)
    assert len(port.sent) == 3 and len(port.closed) == 3
    assert len(port.rounds) == 1 and port.rounds[0].asked == port.rounds[0].total == 3
    assert port.events[-1][0] == "round"
    await time_up(service, clock)  # over: nothing more
    assert len(port.sent) == 3 and len(port.rounds) == 1
    assert len({(q.quiz_id, q.question_id) for q in port.sent}) == 3  # no repeats


async def test_the_round_summary_says_who_got_how_many_right(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    await start(service, port, GROUP, 2)
    for _ in range(2):
        q = port.sent[-1]
        await service.answer(q.post_id, ADA, q.correct)
        await service.answer(q.post_id, BO, (q.correct + 1) % len(q.options))
        await time_up(service, clock)
    (summary,) = port.rounds
    assert [(s.name, s.right, s.answered) for s in summary.scores] == [
        ("Ada", 2, 2), ("Bo", 0, 2)]


async def test_a_new_quiz_replaces_a_running_round(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    first = await start(service, port, GROUP, 5)
    await service.answer(first.post_id, BO, first.correct)
    await start(service, port, GROUP, None)
    assert [s.post_id for s in port.closed] == [first.post_id]
    (summary,) = port.rounds
    assert (summary.asked, summary.total) == (1, 5)
    assert [(s.name, s.right) for s in summary.scores] == [("Bo", 1)]
    await time_up(service, clock)  # the single question closes; no round goes on
    assert len(port.sent) == 2 and len(port.rounds) == 1


async def test_a_round_of_a_quiz_or_topic_stays_in_it(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    quiz = service.quizzes()[0]
    await start(service, port, GROUP, 2, quiz.id)
    await time_up(service, clock)
    assert {q.quiz_id for q in port.sent} == {quiz.id}


@pytest.mark.parametrize("count", [0, MAX_ROUND + 1, "many", "-3"])
async def test_a_bad_count_is_refused_and_nothing_changes(
    service: QuizService, port: FakePort, count: int | str
) -> None:
    open_question = await start(service, port, GROUP, None)
    with pytest.raises(BadCount) as refused:
        await start(service, port, GROUP, count)
    assert str(refused.value.values["text"]) == str(count)
    assert [p.id for p in await service.storage.open_posts(GROUP.key)] == [
        open_question.post_id]


async def test_a_count_of_one_is_a_single_question(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    await start(service, port, GROUP, "1")
    await time_up(service, clock)
    assert len(port.sent) == 1 and port.rounds == []


async def test_a_private_chat_ignores_the_count(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    await start(service, port, ALONE, 3)
    clock.advance(hours=1)
    await Scheduler(service).tick()
    assert len(port.sent) == 1 and port.rounds == []


async def test_a_round_question_is_asked_once_by_two_schedulers(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    await start(service, port, GROUP, 2)
    clock.advance(hours=1)
    await service.questions.close_due()
    (asked_a, _), (asked_b, _) = await asyncio.gather(service.rounds.advance(),
                                                      service.rounds.advance())
    assert len(asked_a) + len(asked_b) == 1


async def test_a_round_in_a_chat_that_is_gone_ends(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    await start(service, port, GROUP, 3)
    port.gone.add(GROUP.key)
    await time_up(service, clock)
    assert await service.storage.active_rounds(GROUP.key) == []
    await time_up(service, clock)
    assert len(port.sent) == 1


async def test_the_round_uses_the_chat_question_time(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    await service.change_settings(GROUP, by=ADA, allowed=True, seconds=30)
    first = await start(service, port, GROUP, 2)
    assert first.closes_at == clock.now() + timedelta(seconds=30)
    clock.advance(31)
    await Scheduler(service).tick()
    assert port.sent[1].closes_at == clock.now() + timedelta(seconds=30)


async def test_a_round_keeps_the_mode_it_was_asked_with(
    service: QuizService, port: FakePort
) -> None:
    assert await service.question_mode(GROUP) is None
    await service.change_settings(GROUP, allowed=True, mode="polls")
    async with service.quiz(GROUP, ADA, count=2, mode="buttons") as question:
        await port.send_question(question)
    assert await service.question_mode(GROUP.key) == "buttons"
    await start(service, port, GROUP, None)  # the round is replaced: the chat's setting
    assert await service.question_mode(GROUP) == "polls"
