"""A pack published or withdrawn in one process reaches the others on one database: two
services over two stores (one SQLite file, or one PostgreSQL database), driven by the test's
clock and the scheduler's tick. Bound: the next scheduler tick of each process (one second
apart when running); an answer to a post of a quiz the process does not know yet reloads at
once, so no answer is dropped."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from bot.content import load_catalog
from bot.core.errors import UnknownQuiz
from bot.core.models import AnswerStatus, Chat, Person
from bot.core.ports import Storage
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from bot.storage import SqliteStorage, storage_for
from tests.clock import FakeClock
from tests.conftest import SAMPLE_PACKS
from tests.ports import FakePort
from tests.test_authoring import AUTHOR, poll

GROUP = Chat("tg:-5", "Group")
VOTER = Person("tg:2001", "Vera")


@pytest.fixture
async def other_store(storage: Storage) -> AsyncIterator[Storage]:
    """A second process's store on the same database."""
    database = storage.path if isinstance(storage, SqliteStorage) else storage.url  # type: ignore[attr-defined]
    store = storage_for(database)
    await store.open()
    yield store
    await store.close()


async def _services(
    storage: Storage, other_store: Storage, clock: FakeClock
) -> tuple[QuizService, QuizService]:
    services = []
    for store in (storage, other_store):
        service = QuizService(load_catalog(SAMPLE_PACKS), store, clock, random.Random(7),
                              authors={AUTHOR.key})
        await service.authoring.load()
        services.append(service)
    return services[0], services[1]


async def _publish(service: QuizService, title: str, ref: str) -> str:
    await service.authoring.add(AUTHOR, "en", poll(1), ref)
    await service.authoring.name(AUTHOR, title)
    quiz_id = (await service.authoring.publish(AUTHOR)).quiz_id
    assert quiz_id is not None
    return quiz_id


async def test_a_pack_published_in_one_process_is_offered_in_another_after_its_next_tick(
    storage: Storage, other_store: Storage, clock: FakeClock,
) -> None:
    first, second = await _services(storage, other_store, clock)
    quiz_id = await _publish(first, "Counting", "m1")
    assert quiz_id not in {q.id for q in second.questions.quizzes()}
    await Scheduler(second).tick()
    assert quiz_id in {q.id for q in second.questions.quizzes()}


async def test_quiz_with_a_pack_published_in_another_process_a_moment_ago_is_asked(
    storage: Storage, other_store: Storage, clock: FakeClock,
) -> None:
    first, second = await _services(storage, other_store, clock)
    port = FakePort("tg:", clock).attach(second)
    quiz_id = await _publish(first, "Counting", "m1")
    # before the other process's scheduler ticked: /quiz <id> reloads the packs first
    async with second.asking.quiz(GROUP, VOTER, quiz_id) as shown:
        await port.send_question(shown)
    assert (await second.answer(shown.post_id, VOTER, shown.correct)).accepted
    with pytest.raises(UnknownQuiz):  # a name no process published is still refused
        async with second.asking.quiz(GROUP, VOTER, "no-such-pack"):
            pass


async def test_a_vote_on_a_quiz_this_process_does_not_know_yet_is_stored(
    storage: Storage, other_store: Storage, clock: FakeClock,
) -> None:
    first, second = await _services(storage, other_store, clock)
    port = FakePort("tg:", clock).attach(first)
    quiz_id = await _publish(first, "Counting", "m1")
    async with first.asking.quiz(GROUP, AUTHOR, quiz_id) as shown:
        await port.send_question(shown)
    # the vote reaches the other process before its scheduler ticked
    result = await second.answer(shown.post_id, VOTER, shown.correct)
    assert result.status is AnswerStatus.ACCEPTED
    assert (await storage.answer_of(shown.post_id, VOTER.key)) is not None
    assert second.catalog.get(quiz_id) is not None


async def test_a_pack_withdrawn_in_one_process_stops_being_offered_in_another(
    storage: Storage, other_store: Storage, clock: FakeClock,
) -> None:
    first, second = await _services(storage, other_store, clock)
    quiz_id = await _publish(first, "Counting", "m1")
    await Scheduler(second).tick()
    assert quiz_id in {q.id for q in second.questions.quizzes()}
    await first.authoring.unpublish(AUTHOR, quiz_id)
    await Scheduler(second).tick()
    assert quiz_id not in {q.id for q in second.questions.quizzes()}
    with pytest.raises(UnknownQuiz):
        async with second.asking.quiz(GROUP, VOTER, quiz_id):
            pass
    # its id stays taken there too
    assert quiz_id in second.catalog.quizzes
