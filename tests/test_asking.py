"""/quiz and answers in the core, with no platform: what replaces what, who a question is for,
who may answer it. Summaries go out through a FakePort, as they would through an adapter."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime

import pytest

from bot.core.delivery import SUMMARY_WINDOW
from bot.core.errors import NoActiveRun, UnknownQuiz
from bot.core.models import AnswerStatus, Chat, Person, ShownQuestion
from bot.core.scheduler import Scheduler
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.ports import FakePort

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
ADA, BO, CY, DI = (Person(f"tg:{i}", name) for i, name in enumerate(("Ada", "Bo", "Cy", "Di"), 1))
ALONE = Chat(ADA.key, "Ada", is_private=True)  # Ada's private chat with the bot


@pytest.fixture
def port(service: QuizService) -> FakePort:
    return FakePort("tg:").attach(service)


async def show(
    service: QuizService, port: FakePort, chat: Chat, person: Person | None,
    selector: str | None = None, *, run: bool | None = None,
) -> ShownQuestion:
    """/quiz as an adapter handles it: the question is sent (and bound) inside the block."""
    async with service.asking.quiz(chat, person, selector, run=run) as question:
        await asyncio.sleep(0)  # the platform round trip: other commands run meanwhile
        await port.send_question(question)
    return question


async def open_ids(service: QuizService, chat: Chat, kind: str | None = None) -> list[int]:
    return [p.id for p in await service.storage.open_posts(chat.key, kind=kind)]


def wrong(q: ShownQuestion) -> int:
    return (q.correct + 1) % len(q.options)


# a shared chat -------------------------------------------------------------------------------
async def test_concurrent_quiz_in_one_chat_leaves_one_question_open(
    service: QuizService, port: FakePort
) -> None:
    shown = await asyncio.gather(*(show(service, port, GROUP, p) for p in (ADA, BO, CY, DI)))
    assert len({q.post_id for q in shown}) == 4
    sent = [q.post_id for q in port.sent]
    assert await open_ids(service, GROUP) == [sent[-1]]  # the last one shown stays
    # each question was replaced only after it was really there, and closed with a summary
    assert [s.post_id for s in port.closed] == sent[:-1]
    assert all(len(s.refs) == 1 for s in port.closed)
    late = await service.answer(sent[0], ADA, 0)
    assert late.status is AnswerStatus.CLOSED
    assert (await service.answer(sent[-1], ADA, 0)).accepted


async def test_the_chat_stays_locked_until_the_question_is_shown(
    service: QuizService, port: FakePort
) -> None:
    entered = asyncio.Event()

    async def slow_first() -> ShownQuestion:
        async with service.asking.quiz(GROUP, ADA) as question:
            entered.set()
            # a slow platform: long enough for a second /quiz to close this question under
            # our feet, were the chat not locked (it is, so the wait runs out)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(port.closing.wait(), 0.3)
            await port.send_question(question)
        return question

    first_task = asyncio.create_task(slow_first())
    await entered.wait()
    second = await show(service, port, GROUP, BO)
    first = await first_task
    assert [q.post_id for q in port.sent] == [first.post_id, second.post_id]
    [summary] = port.closed  # closed after it was shown, with the platform's reference
    assert summary.post_id == first.post_id and summary.refs == ("tg:msg:1",)
    assert await open_ids(service, GROUP) == [second.post_id]


async def test_unknown_selector_closes_nothing(service: QuizService, port: FakePort) -> None:
    q = await show(service, port, GROUP, ADA)
    with pytest.raises(UnknownQuiz) as info:
        await show(service, port, GROUP, BO, "nope")
    assert info.value.selector == "nope" and [i.id for i in info.value.available] == ["sample"]
    assert await open_ids(service, GROUP) == [q.post_id]
    assert port.closed == [] and len(port.sent) == 1
    run = await show(service, port, ALONE, ADA, "sample")
    with pytest.raises(UnknownQuiz):
        await show(service, port, ALONE, ADA, "nope")
    assert await open_ids(service, ALONE) == [run.post_id]


async def test_a_tag_or_quiz_id_in_a_shared_chat_is_one_question_for_everyone(
    service: QuizService, port: FakePort
) -> None:
    for selector in ("basics", "Sample", None):
        q = await show(service, port, GROUP, ADA, selector)
        assert q.quiz_id == "sample" and q.run_id is None and q.owner_key is None
        assert q.closes_at is not None  # a shared /quiz question has a time limit
    assert (await service.answer(q.post_id, BO, q.correct)).personal is False


async def test_a_channel_post_asks_for_nobody_in_particular(
    service: QuizService, port: FakePort
) -> None:
    channel = Chat("tg:-300", "News")
    first = await show(service, port, channel, None)
    second = await show(service, port, channel, None)
    assert first.owner_key is None and second.owner_key is None
    assert [s.post_id for s in port.closed] == [first.post_id]


async def test_daily_question_is_not_replaced_by_quiz(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    await service.daily.set(GROUP, "13:00", allowed=True)
    clock.set(datetime(2026, 3, 1, 13, tzinfo=UTC))
    assert (await Scheduler(service).tick()).posted == 1
    [daily] = port.sent
    first = await show(service, port, GROUP, ADA)
    second = await show(service, port, GROUP, BO)
    assert [s.post_id for s in port.closed] == [first.post_id]  # /quiz replaced only /quiz
    assert await open_ids(service, GROUP, "daily") == [daily.post_id]
    assert sorted(await open_ids(service, GROUP)) == sorted([daily.post_id, second.post_id])
    assert (await service.answer(daily.post_id, CY, daily.correct)).accepted


# a private chat ------------------------------------------------------------------------------
async def test_private_chat_routing(service: QuizService, port: FakePort) -> None:
    # nothing, with no unfinished run: one question from any quiz, Ada's alone
    single = await show(service, port, ALONE, ADA)
    assert single.run_id is None and single.owner_key == ADA.key and single.personal
    # a quiz id: the whole quiz, in order
    run = await show(service, port, ALONE, ADA, "sample")
    assert run.run_id is not None and run.owner_key == ADA.key and run.number == 1
    # a topic: one question chosen for Ada, not a run
    topical = await show(service, port, ALONE, ADA, "basics")
    assert topical.quiz_id == "sample" and topical.run_id is None
    assert topical.owner_key == ADA.key
    # nothing, with an unfinished run: the run where it stopped
    resumed = await show(service, port, ALONE, ADA)
    assert resumed.post_id == run.post_id and resumed.options == run.options
    # the quiz id again resumes it too, rather than starting over
    assert (await show(service, port, ALONE, ADA, "sample")).post_id == run.post_id
    # private questions are Ada's business: nothing was ever summarised in her chat
    assert port.closed == []


async def test_a_new_private_question_replaces_the_last_one_quietly(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    first = await show(service, port, ALONE, ADA)
    second = await show(service, port, ALONE, ADA)
    assert await open_ids(service, ALONE) == [second.post_id]
    assert (await service.answer(first.post_id, ADA, first.correct)).status is AnswerStatus.CLOSED
    clock.advance(minutes=5)
    await Scheduler(service).tick()
    assert port.closed == []  # no summary in a private chat
    assert await service.questions.unposted_summaries(SUMMARY_WINDOW) == []


async def test_a_run_survives_a_single_question_in_between(
    service: QuizService, port: FakePort
) -> None:
    run = await show(service, port, ALONE, ADA, "sample")
    single = await show(service, port, ALONE, ADA, "basics")
    assert (await service.answer(single.post_id, ADA, single.correct)).accepted
    assert await open_ids(service, ALONE) == [run.post_id]  # the single one closed, not the run
    result = await service.answer(run.post_id, ADA, run.correct)
    assert result.accepted and result.next_question is not None
    assert result.next_question.number == 2


async def test_run_true_with_a_topic_is_refused(service: QuizService, port: FakePort) -> None:
    q = await show(service, port, GROUP, BO)
    with pytest.raises(UnknownQuiz) as info:
        await show(service, port, GROUP, ADA, "basics", run=True)
    assert info.value.selector == "basics"
    with pytest.raises(UnknownQuiz):
        await show(service, port, ALONE, ADA, "basics", run=True)
    assert await service.runs.active(ADA, GROUP) is None
    assert await open_ids(service, GROUP) == [q.post_id] and port.closed == []


async def test_run_true_in_a_shared_chat_is_the_persons_run(
    service: QuizService, port: FakePort
) -> None:
    shared = await show(service, port, GROUP, BO)
    run = await show(service, port, GROUP, ADA, "sample", run=True)
    assert run.run_id is not None and run.owner_key == ADA.key
    assert sorted(await open_ids(service, GROUP)) == sorted([shared.post_id, run.post_id])
    assert port.closed == []  # a run does not replace the chat's question
    with pytest.raises(NoActiveRun):
        await show(service, port, GROUP, BO, run=True)  # Bo has no run to resume
    assert (await show(service, port, GROUP, ADA, run=True)).post_id == run.post_id


# answers -------------------------------------------------------------------------------------
async def test_someone_elses_private_question_is_not_theirs(
    service: QuizService, port: FakePort
) -> None:
    single = await show(service, port, ALONE, ADA)
    run = await show(service, port, ALONE, ADA, "sample")
    for q in (single, run):  # e.g. a forwarded poll
        result = await service.answer(q.post_id, BO, q.correct)
        assert result.status is AnswerStatus.NOT_YOURS and not result.accepted
        assert await service.storage.answer_of(q.post_id, BO.key) is None
        assert await service.questions.live_count(q.post_id) == 0  # still open, nothing stored
    assert (await service.leaderboard(None)).rows == ()
    assert (await service.boards.stats(BO)).answered == 0
    assert (await service.answer(single.post_id, ADA, single.correct)).accepted


async def test_the_owners_answer_closes_a_private_question_quietly(
    service: QuizService, port: FakePort, clock: FakeClock
) -> None:
    q = await show(service, port, ALONE, ADA)
    result = await service.answer(q.post_id, ADA, wrong(q))
    assert result.accepted and result.personal and not result.correct
    assert result.next_question is None and result.run_summary is None
    assert await service.questions.live_count(q.post_id) is None  # closed
    again = await service.answer(q.post_id, ADA, q.correct)
    assert again.status is AnswerStatus.ALREADY_ANSWERED and again.chosen == wrong(q)
    clock.advance(minutes=1)
    await Scheduler(service).tick()
    assert port.closed == []  # the answer was its summary
    assert await service.questions.unposted_summaries(SUMMARY_WINDOW) == []


async def test_first_answer_is_final_on_a_shared_question(
    service: QuizService, port: FakePort
) -> None:
    q = await show(service, port, GROUP, ADA)
    assert (await service.answer(q.post_id, BO, wrong(q))).accepted
    again = await service.answer(q.post_id, BO, q.correct)
    assert again.status is AnswerStatus.ALREADY_ANSWERED
    assert again.chosen == wrong(q) and not again.correct and not again.personal
    assert await service.questions.live_count(q.post_id) == 1  # a shared question stays open
    board = await service.leaderboard(GROUP)
    assert [(r.name, r.correct, r.answered) for r in board.rows] == [("Bo", 0, 1)]


async def test_a_closed_question_refuses_answers(service: QuizService, port: FakePort) -> None:
    q = await show(service, port, GROUP, ADA)
    assert (await service.answer(q.post_id, BO, q.correct)).accepted
    await show(service, port, GROUP, ADA)  # replaces it
    late = await service.answer(q.post_id, CY, q.correct)
    assert late.status is AnswerStatus.CLOSED and not late.accepted
    assert await service.storage.answer_of(q.post_id, CY.key) is None
    earlier = await service.answer(q.post_id, BO, wrong(q))  # Bo's answer stands
    assert earlier.status is AnswerStatus.ALREADY_ANSWERED and earlier.correct
    [summary] = port.closed
    assert (summary.answered, summary.right) == (1, 1)


async def test_a_run_is_answered_through_to_its_summary(
    service: QuizService, port: FakePort
) -> None:
    q = await show(service, port, ALONE, ADA, "sample")
    for _ in range(3):
        result = await service.answer(q.post_id, ADA, q.correct)
        assert result.accepted and result.personal
        if result.run_summary is not None:
            break
        assert result.next_question is not None and result.next_question.owner_key == ADA.key
        q = result.next_question
    assert result.run_summary is not None
    assert (result.run_summary.score, result.run_summary.total) == (3, 3)
    assert await service.runs.active(ADA, ALONE) is None
    nxt = await show(service, port, ALONE, ADA)  # the run is over: one question again
    assert nxt.run_id is None and nxt.owner_key == ADA.key
