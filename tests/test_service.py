"""The core without any platform: asking, answering, closing, runs, boards, stats, locales."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.content import Catalog
from bot.core import selection
from bot.core.delivery import SUMMARY_WINDOW
from bot.core.errors import NoActiveRun, NotAllowed, UnknownQuiz, UnsupportedLocale
from bot.core.models import AnswerStatus, Chat, Person, ShownQuestion
from bot.core.service import QuizService
from tests.clock import FakeClock
from tests.ports import FakePort
from tests.sqlite_in_loop import LoopDatabase, LoopStorage

pytestmark = pytest.mark.memory_store  # the core needs a store, not a database

GROUP = Chat("tg:-100", "Study group")
ALONE = Chat("tg:1", "Ada", is_private=True)
ADA = Person("tg:1", "Ada")
BO = Person("tg:2", "Bo", platform_locale="bn-BD")
CY = Person("tg:3", "Cy")


async def ask(
    service: QuizService, chat: Chat, selector: str | None = None, *,
    locale: str | None = None, open_for: timedelta | None = None,
) -> ShownQuestion:
    """A new question in `chat` (in the chat's language), closing nothing."""
    locale = locale or await service.locales.for_audience(chat)
    return await service.questions.ask(chat, selector, locale, open_for=open_for)


async def quiz(
    service: QuizService, chat: Chat, person: Person | None, selector: str | None = None
) -> ShownQuestion:
    """/quiz as an adapter runs it."""
    async with service.asking.quiz(chat, person, selector) as question:
        return question


async def start_run(
    service: QuizService, person: Person, chat: Chat, quiz_id: str | None = None
) -> ShownQuestion:
    locale = await service.locales.for_person(person, chat)
    return await service.runs.start(person, chat, service.questions.quiz_named(quiz_id), locale)


async def test_answer_is_scored_against_the_canonical_key(service: QuizService) -> None:
    q = await ask(service, GROUP, "sample")
    question = service.catalog.question(q.quiz_id, q.question_id)
    assert q.options[q.correct] == question.options[question.answer].text.en
    right = await service.answer(q.post_id, ADA, q.correct)
    assert right.accepted and right.correct and right.explanation == question.explanation.en
    wrong = await service.answer(q.post_id, BO, (q.correct + 1) % len(q.options))
    assert wrong.accepted and not wrong.correct
    assert wrong.correct_option == q.correct


async def test_first_answer_is_final(service: QuizService) -> None:
    q = await ask(service, GROUP)
    wrong = (q.correct + 1) % len(q.options)
    first = await service.answer(q.post_id, ADA, wrong)
    again = await service.answer(q.post_id, ADA, q.correct)
    assert first.accepted and not first.correct
    assert again.status is AnswerStatus.ALREADY_ANSWERED
    assert again.chosen == wrong and not again.correct
    board = await service.leaderboard(GROUP)
    assert [(r.correct, r.answered) for r in board.rows] == [(0, 1)]


async def test_concurrent_duplicates_count_once(service: QuizService) -> None:
    q = await ask(service, GROUP)
    results = await asyncio.gather(
        *(service.answer(q.post_id, ADA, q.correct) for _ in range(25))
    )
    assert sum(r.accepted for r in results) == 1
    assert all(r.status is AnswerStatus.ALREADY_ANSWERED for r in results if not r.accepted)
    board = await service.leaderboard(None)
    assert board.rows[0].answered == 1


async def test_closed_and_expired_posts_refuse_answers(
    service: QuizService, clock: FakeClock
) -> None:
    q = await ask(service, GROUP)
    summary = await service.questions.close(q.post_id)
    assert summary is not None
    assert await service.questions.close(q.post_id) is None  # the summary is posted once
    late = await service.answer(q.post_id, ADA, q.correct)
    assert late.status is AnswerStatus.CLOSED
    timed = await ask(service, GROUP, open_for=timedelta(seconds=30))
    clock.advance(31)
    assert (await service.answer(timed.post_id, ADA, 0)).status is AnswerStatus.CLOSED
    assert (await service.leaderboard(None)).rows == ()


async def test_unknown_post_and_bad_option(service: QuizService) -> None:
    assert (await service.answer(999, ADA, 0)).status is AnswerStatus.UNKNOWN_POST
    q = await ask(service, GROUP)
    assert (await service.answer(q.post_id, ADA, 7)).status is AnswerStatus.INVALID_OPTION
    assert (await service.answer(q.post_id, ADA, -1)).status is AnswerStatus.INVALID_OPTION
    assert (await service.leaderboard(None)).rows == ()


async def test_unknown_quiz_lists_available(service: QuizService) -> None:
    with pytest.raises(UnknownQuiz) as info:
        await ask(service, GROUP, "nope")
    assert [q.id for q in info.value.available] == ["sample"]
    assert (await ask(service, GROUP, "basics")).quiz_id == "sample"  # a tag works


async def test_group_gets_every_question_before_repeats(service: QuizService) -> None:
    seen = [(await ask(service, GROUP)).question_id for _ in range(3)]
    assert sorted(seen) == ["s-one", "s-three", "s-two"]
    # /quiz (which replaces the previous question) cycles the same way
    again = [(await quiz(service, GROUP, ADA)).question_id for _ in range(3)]
    assert sorted(again) == ["s-one", "s-three", "s-two"]


async def test_person_alone_gets_missed_questions_first(service: QuizService) -> None:
    for _ in range(3):
        q = await quiz(service, ALONE, ADA)
        assert q.owner_key == ADA.key and q.run_id is None
        pick = q.correct if q.question_id != "s-two" else (q.correct + 1) % 3
        assert (await service.answer(q.post_id, ADA, pick)).accepted
    assert (await quiz(service, ALONE, ADA)).question_id == "s-two"


async def test_summary_counts_and_fastest(service: QuizService, clock: FakeClock) -> None:
    q = await ask(service, GROUP)
    clock.advance(5)
    await service.answer(q.post_id, BO, q.correct)
    clock.advance(1)
    await service.answer(q.post_id, ADA, (q.correct + 1) % 3)
    clock.advance(1)
    await service.answer(q.post_id, CY, q.correct)
    [summary] = await service.questions.close_open(GROUP.key, kind="quiz")
    assert (summary.answered, summary.right) == (3, 2)
    assert summary.per_option[q.correct] == 2 and sum(summary.per_option) == 3
    assert [a.name for a in summary.fastest] == ["Bo", "Cy"]
    assert [a.elapsed_ms for a in summary.fastest] == [5000, 7000]


async def test_close_due_closes_every_platforms_questions_once(
    service: QuizService, clock: FakeClock
) -> None:
    tg = await ask(service, GROUP, open_for=timedelta(seconds=10))
    dc = await ask(service, Chat("dc:5"), open_for=timedelta(seconds=10))
    later = await ask(service, GROUP, open_for=timedelta(seconds=60))
    clock.advance(9)
    assert await service.questions.close_due() == []  # not yet
    clock.advance(2)
    closed = await service.questions.close_due()
    assert sorted(s.post_id for s in closed) == sorted([tg.post_id, dc.post_id])
    assert {s.chat_key for s in closed} == {GROUP.key, "dc:5"}
    assert await service.questions.close_due() == []
    assert await service.questions.live_count(later.post_id) == 0  # still open


async def test_quiz_run_in_order_to_final_score(service: QuizService) -> None:
    q = await start_run(service, ADA, ALONE, "sample")
    numbers = []
    while True:
        numbers.append(q.number)
        pick = q.correct if q.number != 2 else (q.correct + 1) % len(q.options)
        result = await service.answer(q.post_id, ADA, pick)
        assert result.accepted
        if result.run_summary:
            break
        assert result.next_question is not None
        q = result.next_question
    assert numbers == [1, 2, 3]
    summary = result.run_summary
    assert (summary.score, summary.total) == (2, 3)
    assert [m.number for m in summary.missed] == [2]
    assert summary.missed[0].correct_text == "Red"
    with pytest.raises(NoActiveRun):
        await start_run(service, ADA, ALONE)


async def test_run_survives_restart(
    sample_catalog: Catalog, clock: FakeClock
) -> None:
    database = LoopDatabase()
    async with LoopStorage(database) as store:
        svc = QuizService(sample_catalog, store, clock, random.Random(1))
        q = await start_run(svc, ADA, ALONE, "sample")
        result = await svc.answer(q.post_id, ADA, q.correct)
        second = result.next_question
        assert second is not None and second.number == 2
    async with LoopStorage(database) as store:  # a new process
        svc = QuizService(sample_catalog, store, clock, random.Random(2))
        resumed = await start_run(svc, ADA, ALONE)
        assert resumed.post_id == second.post_id and resumed.options == second.options
        result = await svc.answer(resumed.post_id, ADA, resumed.correct)
        assert result.next_question is not None
        result = await svc.answer(result.next_question.post_id, ADA, 0)
        assert result.run_summary is not None and result.run_summary.total == 3


async def test_someone_elses_run_question_is_refused(service: QuizService) -> None:
    q = await start_run(service, ADA, ALONE, "sample")
    assert (await service.answer(q.post_id, BO, q.correct)).status is AnswerStatus.NOT_YOURS


async def test_leaderboard_ties_broken_by_time_and_own_rank(
    service: QuizService, clock: FakeClock
) -> None:
    people = [Person(f"tg:{i}", f"P{i}") for i in range(10, 16)]
    q = await ask(service, GROUP)
    for person in people:
        clock.advance(1)
        # everyone right; later answerers took longer
        await service.answer(q.post_id, person, q.correct)
    slow = Person("tg:99", "Slow")
    await service.answer(q.post_id, slow, (q.correct + 1) % 3)
    board = await service.leaderboard(GROUP, "all", person=slow, limit=3)
    assert [r.name for r in board.rows] == ["P10", "P11", "P12"]
    assert [r.rank for r in board.rows] == [1, 2, 3]
    assert board.me is not None and board.me.rank == 7 and board.me.name == "Slow"
    global_board = await service.leaderboard(None, "all", person=people[2], limit=2)
    assert people[2].key == "tg:12"
    assert global_board.me is not None and global_board.me.rank == 3


async def test_leaderboard_periods(service: QuizService, clock: FakeClock) -> None:
    q = await ask(service, GROUP)
    await service.answer(q.post_id, ADA, q.correct)
    clock.advance(days=3)
    q2 = await ask(service, GROUP)
    await service.answer(q2.post_id, BO, q2.correct)
    day = await service.leaderboard(GROUP, "day")
    week = await service.leaderboard(GROUP, "week")
    clock.advance(days=8)
    later_week = await service.leaderboard(GROUP, "week")
    assert [r.name for r in day.rows] == ["Bo"]
    assert sorted(r.name for r in week.rows) == ["Ada", "Bo"]
    assert later_week.rows == ()
    assert len((await service.leaderboard(GROUP, "all")).rows) == 2
    assert (await service.leaderboard(Chat("tg:-999"), "all")).rows == ()


async def test_stats_and_streaks(service: QuizService) -> None:
    for pattern in (True, True, False, True, True, True):
        q = await ask(service, GROUP)
        await service.answer(q.post_id, ADA, q.correct if pattern else (q.correct + 1) % 3)
    stats = await service.boards.stats(ADA)
    assert (stats.answered, stats.correct) == (6, 5)
    assert (stats.current_streak, stats.best_streak) == (3, 3)
    assert stats.per_quiz[0].quiz_id == "sample" and stats.per_quiz[0].answered == 6
    assert round(stats.accuracy, 3) == round(5 / 6, 3)


async def test_review_lists_missed(service: QuizService) -> None:
    q = await ask(service, GROUP)
    await service.answer(q.post_id, ADA, (q.correct + 1) % 3)
    [missed] = await service.boards.missed(ADA)
    assert missed.question_id == q.question_id and missed.correct_text == q.options[q.correct]


async def test_locale_resolution_order(service: QuizService) -> None:
    assert await service.locales.for_person(BO, GROUP) == "bn"  # platform locale
    with pytest.raises(NotAllowed):
        await service.set_language(CY, "hi", chat=GROUP, allowed=False)
    assert await service.locales.for_audience(GROUP) == "en"  # a refusal changes nothing
    assert await service.set_language(CY, "hi", chat=GROUP, allowed=True) == "hi"
    assert await service.locales.for_person(BO, GROUP) == "bn"  # what Bo reads alone: his client's
    assert await service.set_language(BO, "en") == "en"
    assert await service.locales.for_person(BO, GROUP) == "en"  # own choice beats all
    assert await service.locales.for_person(CY, None) == "en"
    with pytest.raises(UnsupportedLocale):
        await service.set_language(BO, "fr")
    assert await service.locales.for_person(BO, GROUP) == "en"
    q = await quiz(service, GROUP, BO, "sample")
    assert q.locale == "hi"  # what the chat sees uses the chat's language
    assert await service.set_language(BO, "auto") is None  # back to following his client
    assert await service.locales.for_person(BO, GROUP) == "bn"
    # no client: the chat
    assert await service.locales.for_person(Person("tg:4", "Di"), GROUP) == "hi"


async def test_missing_translation_falls_back_to_english(service: QuizService) -> None:
    q = await ask(service, GROUP, "sample", locale="hi")
    assert all(q.options) and q.prompt  # sample has no Hindi at all: English, never blank


@settings(max_examples=50, deadline=None)
@given(n=st.integers(min_value=2, max_value=10), seed=st.integers(), shown=st.data())
def test_shuffled_order_maps_back(n: int, seed: int, shown: st.DataObject) -> None:
    order = selection.shuffled_order(n, random.Random(seed))
    assert sorted(order) == list(range(n))
    index = shown.draw(st.integers(min_value=0, max_value=n - 1))
    assert order.index(order[index]) == index


async def test_live_count_and_selector_check(service: QuizService) -> None:
    q = await ask(service, GROUP)
    assert await service.questions.live_count(q.post_id) == 0
    await service.answer(q.post_id, ADA, 0)
    await service.answer(q.post_id, BO, 1)
    assert await service.questions.live_count(q.post_id) == 2
    await service.questions.close(q.post_id)
    assert await service.questions.live_count(q.post_id) is None
    assert [q.id for q in service.questions.select("basics")] == ["sample"]
    with pytest.raises(UnknownQuiz):
        service.questions.select("unknown")


async def test_post_whose_question_left_the_content(
    sample_catalog: Catalog, clock: FakeClock
) -> None:
    async with LoopStorage() as store:
        service = QuizService(sample_catalog, store, clock)
        q = await ask(service, GROUP, "sample")
        sample = sample_catalog.quizzes["sample"]
        trimmed = sample.model_copy(
            update={"questions": [x for x in sample.questions if x.id != q.question_id]}
        )
        changed = Catalog({"sample": trimmed})
        service = QuizService(changed, store, clock)  # a restart with edited content
        assert (await service.answer(q.post_id, ADA, 0)).status is AnswerStatus.UNKNOWN_POST
        assert await service.questions.show(q.post_id) is None
        assert await service.questions.close(q.post_id) is None


async def test_unconfirmed_summary_is_offered_again(service: QuizService, clock: FakeClock) -> None:
    q = await ask(service, GROUP)
    quiet = await ask(service, Chat("tg:-200"))
    summary = await service.questions.close(q.post_id)
    assert summary is not None
    assert await service.questions.close(quiet.post_id, quiet=True) is None
    assert await service.questions.close(q.post_id) is None  # due once, to one caller
    # closed, never confirmed by a platform: offered again (the quiet one never is)
    due = await service.questions.unposted_summaries(SUMMARY_WINDOW)
    assert [s.post_id for s in due] == [q.post_id]
    discord = FakePort("dc:").attach(service)
    await service.delivery.pending()  # only the platform serving the chat gets it
    assert discord.closed == []
    assert [s.post_id for s in await service.questions.unposted_summaries(SUMMARY_WINDOW)] == [
        q.post_id
    ]
    telegram = FakePort("tg:").attach(service)
    await service.delivery.pending()
    assert telegram.closed == []  # still within the grace period: its closer may be posting it
    clock.advance(31)
    await service.delivery.pending()
    assert [s.post_id for s in telegram.closed] == [q.post_id]
    assert await service.questions.unposted_summaries(SUMMARY_WINDOW) == []
    await service.delivery.pending()
    assert len(telegram.closed) == 1  # confirmed: not offered again

    late = await ask(service, GROUP)
    assert await service.questions.close(late.post_id) is not None
    clock.advance(hours=7)  # never confirmed within the window: given up
    assert await service.questions.unposted_summaries(SUMMARY_WINDOW) == []
    await service.delivery.pending()
    assert len(telegram.closed) == 1


async def test_chat_platform_locale_is_remembered_for_scheduled_posts(
    service: QuizService, clock: FakeClock
) -> None:
    server = Chat("dc:77", "general", platform_locale="hi")
    await quiz(service, server, ADA)  # seen once, with the server's language
    bare = Chat("dc:77")  # what the scheduler knows: just the key
    assert await service.locales.for_audience(bare) == "hi"
    await service.daily.set(bare, "00:00", allowed=True)
    clock.advance(days=1)
    claimed = await service.daily.claim((await service.daily.schedules())[0])
    assert claimed is not None and claimed[0].locale == "hi"
    await service.set_language(ADA, "bn", chat=bare, allowed=True)  # an admin's choice wins
    assert await service.locales.for_audience(server) == "bn"
