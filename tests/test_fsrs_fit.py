"""A person's FSRS parameters fitted from their own answers (bot/core/fsrs_fit.py), measured on
simulated learners whose memory differs from the defaults (bot/core/review_simulation.py), the
fit's child process, and the core's refits (bot/core/review.py: who is fitted and when, and
that their review is scheduled with it)."""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta

import pytest
from fsrs import Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS

from bot.core import fsrs_fit
from bot.core.fsrs_fit import checked, fit, fit_in_child, item_reviews, items_of
from bot.core.ports import AnswerRecord, ReviewAnswer, ReviewFit, Storage
from bot.core.review import REFIT_CHECK, REFIT_HOLD, Review
from bot.core.review_simulation import held_out, population
from bot.core.scheduler import Scheduler as TickLoop
from bot.core.service import QuizService
from tests.clock import FakeClock

DAY = datetime(2026, 2, 1, 9, tzinfo=UTC)


def answer(question: str, day: int, correct: bool = True, minutes: int = 0) -> ReviewAnswer:
    return ReviewAnswer("q", question, correct, DAY + timedelta(days=day, minutes=minutes),
                        30_000, True)


def test_an_item_is_a_review_on_a_later_day_with_the_card_s_history_before_it() -> None:
    answers = [answer("a", 0, False), answer("a", 0, minutes=10), answer("a", 2),
               answer("a", 7, False), answer("b", 1)]
    # Again then Good the first day; Good 2 days later; Again 5 days after that
    assert items_of(answers) == [[(1, 0), (3, 0), (3, 2)],
                                 [(1, 0), (3, 0), (3, 2), (1, 5)]]
    assert item_reviews([(DAY.date(), 3)]) == []  # one answer predicts nothing


@pytest.mark.parametrize("seed", [3, 4])
def test_a_fit_predicts_held_out_reviews_better_than_the_defaults(seed: int) -> None:
    """Learners who forget faster than the defaults assume: parameters fitted on their first
    30 days predict the recall of their reviews in the 10 days after better than the defaults
    do, by log loss and by RMSE of the binned recall over the population, and by log loss for
    nearly every learner (one of six may be predicted no better)."""
    measures = [held_out(answers, 30) for _, answers in population(6, 40, 4, seed)]
    assert all(m.reviews >= fsrs_fit.MIN_REVIEWS and m.held_out > 100 for m in measures)
    assert sum(m.fitted_loss < m.default_loss for m in measures) >= 5
    for default, fitted in (("default_loss", "fitted_loss"), ("default_rmse", "fitted_rmse")):
        assert statistics.mean(getattr(m, fitted) for m in measures) < statistics.mean(
            getattr(m, default) for m in measures) * 0.95


def test_too_little_history_keeps_the_defaults() -> None:
    _, answers = population(1, 40, 4, 5)[0]
    few = answers[:150]
    assert fit(few).parameters is None
    assert fit(few).reviews == fsrs_fit.reviews_and_cards(few)[0]


def test_fitted_parameters_are_what_the_scheduler_takes() -> None:
    _, answers = population(1, 40, 4, 6)[0]
    got = fit(answers)
    assert got.parameters is not None and len(got.parameters) == 21
    # judged on the reviews held out of it
    assert got.fitted_loss is not None and got.default_loss is not None
    assert got.fitted_loss < got.default_loss
    Scheduler(parameters=got.parameters)  # within its bounds


def test_parameters_out_of_bounds_are_held_in_and_a_wrong_count_refused() -> None:
    high = [*DEFAULT_PARAMETERS[:20], 0.8000001]  # float32 past the Scheduler's bound
    assert checked(high)[20] == 0.8
    Scheduler(parameters=checked(high))
    with pytest.raises(ValueError):
        checked([0.5] * 7)


async def test_the_child_process_gives_the_same_fit() -> None:
    _, answers = population(1, 40, 4, 6)[0]
    child, here = await fit_in_child(answers), fit(answers)
    # one thread in the child: float sums in another order than here
    assert child.parameters is not None and here.parameters is not None
    assert child.parameters == pytest.approx(here.parameters, rel=1e-3)
    assert (child.reviews, child.items) == (here.reviews, here.items)
    assert child.fitted_loss == pytest.approx(here.fitted_loss, rel=1e-4)


async def test_a_child_past_its_time_is_stopped() -> None:
    _, answers = population(1, 40, 4, 6)[0]
    with pytest.raises(TimeoutError):
        await fit_in_child(answers, seconds=0.01)


async def test_a_child_past_its_memory_fails_clearly() -> None:
    _, answers = population(1, 40, 4, 6)[0]
    with pytest.raises(RuntimeError, match="process failed"):
        await fit_in_child(answers, memory=16 << 20)



# the core: who is fitted, when, and what schedules with it ---------------------------------
async def store_answers(storage: Storage, person: str, answers: list[ReviewAnswer]) -> None:
    for a in answers:
        post = await storage.create_post(person, a.quiz_id, a.question_id, (0, 1), "en",
                                         a.answered_at, owner_key=person)
        await storage.record_answer(AnswerRecord(post.id, person, 0 if a.correct else 1,
                                                 a.correct, a.answered_at, a.elapsed_ms))


async def fit_here(answers: Sequence[ReviewAnswer]) -> ReviewFit:
    return fit(answers)  # in this process: the child is tested above


@pytest.mark.memory_store
async def test_a_person_with_enough_history_is_fitted_once_and_scheduled_with_it(
    service: QuizService, storage: Storage, clock: FakeClock
) -> None:
    _, answers = population(1, 40, 4, 6)[0]
    await store_answers(storage, "tg:1", answers)
    await store_answers(storage, "tg:2", answers[:100])  # too little history
    await storage.materialize()
    review = service.spaced
    review.fitter = fit_here
    clock.set((answers[-1].answered_at + timedelta(hours=1)).replace(microsecond=0))
    assert await review.refit_due() == 1
    stored = await storage.review_fit("tg:1")
    assert stored is not None and stored[1] == clock.now()
    assert stored[0].parameters is not None
    assert await storage.person_parameters("tg:1") == stored[0].parameters
    assert await storage.review_fit("tg:2") is None
    assert (await review.deck("tg:1")).fsrs.parameters == stored[0].parameters
    assert (await review.deck("tg:2")).fsrs.parameters == tuple(DEFAULT_PARAMETERS)
    assert await review.refit_due() == 0  # nothing new since

    tuning = await review.tuning("tg:1", lambda card: True)
    assert tuning.fitted and tuning.target == 0.9
    assert tuning.reviews == fsrs_fit.reviews_and_cards(answers)[0]
    assert tuning.default_retention is not None and tuning.fitted_retention is not None
    # this learner forgets faster than the defaults assume: fitted, less is remembered now
    assert tuning.fitted_retention < tuning.default_retention
    untuned = await review.tuning("tg:2", lambda card: True)
    assert not untuned.fitted and untuned.fit is None and untuned.fitted_retention is None


@pytest.mark.memory_store
async def test_a_fit_that_fails_keeps_the_defaults_until_the_next_is_due(
    service: QuizService, storage: Storage, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    _, answers = population(1, 40, 4, 6)[0]
    await store_answers(storage, "tg:1", answers)
    clock.set((answers[-1].answered_at + timedelta(hours=1)).replace(microsecond=0))

    async def broken(answers: Sequence[ReviewAnswer]) -> ReviewFit:
        raise TimeoutError

    service.spaced.fitter = broken
    assert await service.spaced.refit_due() == 1
    assert "FSRS fit of tg:1 failed" in caplog.text
    stored = await storage.review_fit("tg:1")
    assert stored is not None and stored[0].parameters is None
    assert await service.spaced.refit_due() == 0  # not tried again at once


@pytest.mark.memory_store
async def test_refit_soon_starts_a_round_of_fits_at_most_every_few_minutes(
    service: QuizService, clock: FakeClock
) -> None:
    rounds: list[int] = []
    review = service.spaced

    async def counted(limit: int = 4) -> int:
        rounds.append(limit)
        return 0

    review.refit_due = counted  # type: ignore[method-assign]
    review.refit_soon()
    review.refit_soon()  # running, or just run: not again
    await turns()
    review.refit_soon()
    await turns()
    assert len(rounds) == 1
    clock.advance(REFIT_CHECK.total_seconds())
    review.refit_soon()  # the same process renews its lease
    await turns()
    assert len(rounds) == 2


async def turns() -> None:
    """Let background rounds run their steps (each an await on the store)."""
    for _ in range(20):
        await asyncio.sleep(0)


@pytest.mark.memory_store
async def test_someone_who_answers_only_in_groups_is_fitted_on_the_scheduler_s_tick(
    service: QuizService, storage: Storage, clock: FakeClock
) -> None:
    # no /review, no /stats, no question of their own: only the tick starts their fit
    _, answers = population(1, 40, 4, 6)[0]
    for a in answers:
        post = await storage.create_post("tg:-100", a.quiz_id, a.question_id, (0, 1), "en",
                                         a.answered_at)
        await storage.record_answer(AnswerRecord(post.id, "tg:1", 0 if a.correct else 1,
                                                 a.correct, a.answered_at, a.elapsed_ms))
    await storage.materialize()
    service.spaced.fitter = fit_here
    clock.set((answers[-1].answered_at + timedelta(hours=1)).replace(microsecond=0))
    scheduler = TickLoop(service)
    await scheduler.tick()
    for _ in range(200):  # the round runs in the background
        if await storage.review_fit("tg:1") is not None:
            break
        await asyncio.sleep(0.01)
    stored = await storage.review_fit("tg:1")
    assert stored is not None and stored[0].parameters is not None


@pytest.mark.memory_store
async def test_ticks_on_a_fake_clock_run_one_round_of_fits_at_a_time_and_stop_ends_it(
    service: QuizService, clock: FakeClock
) -> None:
    started: list[int] = []
    cancelled: list[int] = []
    release = asyncio.Event()

    async def slow(limit: int = 4) -> int:  # a round still fitting (a child process)
        started.append(limit)
        try:
            await release.wait()
        except asyncio.CancelledError:
            cancelled.append(len(started))
            raise
        return 0

    service.spaced.refit_due = slow  # type: ignore[method-assign]
    scheduler = TickLoop(service)
    for _ in range(5):  # each tick well past REFIT_CHECK: the running round is not joined
        await scheduler.tick()
        clock.advance(REFIT_CHECK.total_seconds() * 3)
        await asyncio.sleep(0)
    assert started == [4]
    release.set()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    await scheduler.tick()  # done, and REFIT_CHECK went by: the next round
    await asyncio.sleep(0)
    await scheduler.tick()  # that one runs, within REFIT_CHECK: no other
    await asyncio.sleep(0)
    assert len(started) == 2
    release.clear()
    clock.advance(REFIT_CHECK.total_seconds())
    await scheduler.start()  # its first tick starts a round that is still running at stop
    for _ in range(100):
        if len(started) == 3:
            break
        await asyncio.sleep(0.01)
    assert len(started) == 3
    await scheduler.stop()
    assert cancelled == [3]


@pytest.mark.memory_store
async def test_one_process_at_a_time_looks_for_fits_and_makes_them(
    service: QuizService, storage: Storage, clock: FakeClock
) -> None:
    # a second process on the same database: its round waits for the first's lease
    other = Review(service.questions, service.locales, storage, clock)
    rounds: list[str] = []

    def counting(name: str) -> Callable[[int], Awaitable[int]]:
        async def counted(limit: int = 4) -> int:
            rounds.append(name)
            return 0
        return counted

    service.spaced.refit_due = counting("first")  # type: ignore[method-assign,assignment]
    other.refit_due = counting("other")  # type: ignore[method-assign,assignment]
    service.spaced.refit_soon()
    other.refit_soon()
    await turns()
    assert rounds == ["first"]
    clock.advance(REFIT_HOLD.total_seconds() / 2)
    other.refit_soon()  # the lease is the first's for REFIT_HOLD
    await turns()
    assert rounds == ["first"]
    clock.advance(REFIT_HOLD.total_seconds() / 2 + 1)
    other.refit_soon()  # run out: the other process may take it
    await turns()
    assert rounds == ["first", "other"]
