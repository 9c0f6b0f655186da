"""A person's FSRS parameters fitted from their own answers (bot/core/fsrs_fit.py), measured on
simulated learners whose memory differs from the defaults (bot/core/review_simulation.py), and
the fit's child process."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime, timedelta

import pytest
from fsrs import Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS

from bot.core import fsrs_fit
from bot.core.fsrs_fit import checked, fit, fit_in_child, item_reviews, items_of
from bot.core.ports import ReviewAnswer
from bot.core.review_simulation import held_out, population

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

