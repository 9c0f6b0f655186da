"""Rounds in the core, with no platform: /quiz <quiz or tag> N in a shared chat asks N
questions in a row, each closing with its summary when its time is up; the scheduler's tick
asks the next one; a round ends with who got how many right; a new /quiz replaces it."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot.core.errors import MAX_ROUND, BadAsker, BadCount, NotAllowed, StillOpen
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
    async with service.asking.quiz(chat, person, selector, count=count) as question:
        await port.send_question(question)
    return question


async def time_up(service: QuizService, clock: FakeClock) -> None:
    clock.advance((await service.chat_settings.get(GROUP.key)).question_seconds + 1)
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
    quiz = service.questions.quizzes()[0]
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
    await service.chat_settings.change(GROUP, by=ADA, allowed=True, seconds=30)
    first = await start(service, port, GROUP, 2)
    assert first.closes_at == clock.now() + timedelta(seconds=30)
    clock.advance(31)
    await Scheduler(service).tick()
    assert port.sent[1].closes_at == clock.now() + timedelta(seconds=30)


async def test_a_round_keeps_the_mode_it_was_asked_with(
    service: QuizService, port: FakePort
) -> None:
    assert await service.question_mode(GROUP) is None
    await service.chat_settings.change(GROUP, allowed=True, mode="polls")
    async with service.asking.quiz(GROUP, ADA, count=2, mode="buttons") as question:
        await port.send_question(question)
    assert await service.question_mode(GROUP.key) == "buttons"
    await start(service, port, GROUP, None)  # the round is replaced: the chat's setting
    assert await service.question_mode(GROUP) == "polls"


async def test_a_round_numbers_its_questions_and_a_single_one_has_no_number(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    single = await start(service, port, GROUP, None, "sample")
    assert (single.number, single.total) == (None, None)
    first = await start(service, port, GROUP, 2, "sample")
    assert (first.number, first.total) == (1, 2)
    await time_up(service, clock)
    second = port.sent[-1]
    assert (second.number, second.total) == (2, 2)
    again = await service.questions.show(second.post_id, "bn")  # rendered again: still its place
    assert again is not None and (again.number, again.total) == (2, 2)
    [summary] = [s for s in port.closed if s.post_id == first.post_id]
    assert (summary.question.number, summary.question.total) == (1, 2)


async def member() -> bool:
    return False


async def admin() -> bool:
    return True


async def test_a_members_quiz_neither_closes_the_open_question_nor_ends_the_round(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    first = await start(service, port, GROUP, 3)
    with pytest.raises(StillOpen) as info:
        async with service.asking.quiz(GROUP, BO, is_admin=member):
            pass
    assert info.value.post_id == first.post_id
    assert [p.id for p in await service.storage.open_posts(GROUP.key)] == [first.post_id]
    assert len(await service.storage.active_rounds(GROUP.key)) == 1 and port.rounds == []
    async with service.asking.quiz(GROUP, BO, is_admin=admin) as replacing:  # an admin may
        await port.send_question(replacing)
    assert len(port.rounds) == 1 and port.closed[0].post_id == first.post_id


async def test_a_member_may_ask_when_nothing_is_open(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    asked: list[bool] = []

    async def member_asked() -> bool:
        asked.append(True)
        return False

    async with service.asking.quiz(GROUP, BO, is_admin=member_asked) as question:
        await port.send_question(question)
    assert asked == []  # the platform is not even asked
    # its time is up
    clock.advance((await service.chat_settings.get(GROUP.key)).question_seconds + 1)
    async with service.asking.quiz(GROUP, BO, is_admin=member_asked) as question:
        await port.send_question(question)
    assert asked == [] and len(port.sent) == 2


async def test_only_admins_ask_where_the_chat_says_so(
    service: QuizService, port: FakePort
) -> None:
    settings = await service.chat_settings.change(GROUP, allowed=True, words=["quiz", "admins"])
    assert settings.admins_only
    for count in (None, 3):
        with pytest.raises(NotAllowed):
            async with service.asking.quiz(GROUP, BO, count=count, is_admin=member):
                pass
    assert port.sent == [] and await service.storage.open_posts(GROUP.key) == []
    async with service.asking.quiz(GROUP, ADA, is_admin=admin) as question:
        await port.send_question(question)
    async with service.asking.quiz(ALONE, ADA, "sample", is_admin=member) as own:  # alone: anyone
        assert own.personal
    with pytest.raises(BadAsker):
        await service.chat_settings.change(GROUP, allowed=True, words=["quiz", "cats"])
    back = await service.chat_settings.change(GROUP, allowed=True, admins_only="anyone")
    assert not back.admins_only
