"""The difficulty model (bot/core/difficulty.py) and the choice near a target success rate
(bot/core/selection.py), measured on simulated learners of known ability (seeded): the chosen
questions' observed success rate is within 5 points of the target, and the estimated
abilities rank the people as their true abilities do (Spearman >= 0.8 after 30 answers)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import pytest

from bot.core import difficulty, selection
from bot.core.difficulty import First, Rating, Ratings, concept_offsets, difficulty_of, expected

QUIZ = "sim"


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rho of two samples without ties (scipy is no dependency)."""
    def ranks(values: list[float]) -> list[int]:
        order = sorted(range(len(values)), key=values.__getitem__)
        return [order.index(i) for i in range(len(values))]
    n = len(xs)
    return 1 - 6 * sum((a - b) ** 2 for a, b in zip(ranks(xs), ranks(ys), strict=True)) / (
        n * (n * n - 1))


def test_expected_is_the_logistic_of_ability_minus_difficulty() -> None:
    assert expected(0.0, 0.0) == 0.5
    assert expected(1.0, 0.0) == pytest.approx(1 / (1 + math.exp(-1)))
    assert expected(-800.0, 0.0) == pytest.approx(0.0)  # no overflow either way
    assert expected(800.0, 0.0) == pytest.approx(1.0)


def test_a_first_answer_moves_both_ratings_by_the_surprise_later_ones_nothing() -> None:
    ratings = Ratings()
    assert ratings.answer("p", QUIZ, "q", True)
    step = difficulty.uncertainty(0) * 0.5  # right where 50 % was expected
    assert ratings.people["p"] == Rating(step, 1)
    assert ratings.questions[(QUIZ, "q")] == Rating(-step, 1)
    assert ratings.firsts[("p", QUIZ, "q")] == First(0, 0.0, True)
    assert not ratings.answer("p", QUIZ, "q", False)  # seen the answer: memory, not ability
    assert ratings.people["p"] == Rating(step, 1)
    assert ratings.answer("p", QUIZ, "r", False)
    first = ratings.firsts[("p", QUIZ, "r")]
    assert (first.seq, first.logit, first.correct) == (1, step, False)
    assert ratings.people["p"].value < step
    assert difficulty.uncertainty(10) == pytest.approx(difficulty.ALPHA / 2)


def test_the_authored_difficulty_is_a_prior_the_answers_outweigh() -> None:
    assert difficulty_of(None, "hard") == 1.0
    assert difficulty_of(None, None) == 0.0
    assert difficulty_of(Rating(-2.0, difficulty.SEED_ANSWERS), "hard") == pytest.approx(-0.5)
    assert difficulty_of(Rating(-2.0, 10_000), "hard") == pytest.approx(-2.0, abs=0.01)


def test_a_concept_offset_follows_what_the_overall_ability_did_not_explain() -> None:
    even = First(0, 0.0, True)
    offsets = concept_offsets([(First(n, 0.0, True), ("loops",)) for n in range(20)]
                              + [(First(20 + n, 0.0, False), ("io",)) for n in range(20)]
                              + [(even, ())])
    assert offsets["loops"].value > 0.5 > -0.5 > offsets["io"].value
    assert offsets["loops"].answers == 20
    # a second answer predicted right by the offset moves it less than the first
    one = concept_offsets([(First(0, 0.0, True), ("x",))])["x"].value
    two = concept_offsets([(First(0, 0.0, True), ("x",)), (First(1, 0.0, True), ("x",))])
    assert 0 < two["x"].value - one < one


@dataclass
class World:
    """Simulated questions (true difficulty, one concept each, an authored label from it)."""

    truth: dict[selection.Candidate, float]
    concept: dict[selection.Candidate, tuple[str, ...]]
    label: dict[selection.Candidate, str]


def world(rng: random.Random, questions: int, concepts: int) -> World:
    pool = [(QUIZ, f"q{i}") for i in range(questions)]
    truth = {q: rng.gauss(0, 1.3) for q in pool}
    return World(truth, {q: (f"c{rng.randrange(concepts)}",) for q in pool},
                 {q: "easy" if b < -0.6 else "hard" if b > 0.6 else "medium"
                  for q, b in truth.items()})


def simulate(seed: int, target: float, warm: int = 150, measured: int = 80,
             per_person: int = 30, questions: int = 200, concepts: int = 4,
             ) -> tuple[float, float]:
    """`warm` learners answer first (the questions' ratings settle), then `measured` ones:
    their observed success rate and the Spearman of estimated and true abilities after
    `per_person` answers each, every question chosen by selection.pick near `target`."""
    rng = random.Random(seed)
    sim = world(rng, questions, concepts)
    ratings = Ratings()
    pool = list(sim.truth)
    right, asked, estimated, true = 0, 0, [], []
    for n in range(warm + measured):
        person = f"p{n}"
        theta = rng.gauss(0, 1)
        own = {f"c{c}": rng.gauss(0, 0.5) for c in range(concepts)}
        history: dict[selection.Candidate, bool] = {}
        mine: list[tuple[selection.Candidate, First]] = []
        for _ in range(per_person):
            learner = difficulty.learner(ratings.people.get(person), mine,
                                         sim.concept.__getitem__)
            success = {q: learner.success(difficulty_of(ratings.questions.get(q), sim.label[q]),
                                          sim.concept[q]) for q in pool}
            chosen = selection.pick(pool, {}, history, rng, success, target)
            p_true = expected(theta + own[sim.concept[chosen][0]], sim.truth[chosen])
            correct = rng.random() < p_true
            ratings.answer(person, *chosen, correct)
            mine.append((chosen, ratings.firsts[(person, *chosen)]))
            history[chosen] = correct
            if n >= warm:
                right, asked = right + correct, asked + 1
        if n >= warm:
            estimated.append(ratings.people[person].value)
            true.append(theta + sum(own.values()) / concepts)
    return right / asked, spearman(estimated, true)


@pytest.mark.parametrize(("seed", "target"), [(3, 0.75), (4, 0.6), (5, 0.85)])
def test_simulated_learners_succeed_near_the_target_and_are_ranked_right(
    seed: int, target: float
) -> None:
    observed, rho = simulate(seed, target)
    assert abs(observed - target) <= 0.05
    assert rho >= 0.8


def test_without_predictions_the_choice_is_todays() -> None:
    pool = [(QUIZ, "a"), (QUIZ, "b"), (QUIZ, "c")]
    rng = random.Random(1)
    history = {(QUIZ, "a"): True, (QUIZ, "b"): False}
    assert selection.pick(pool, {}, history, rng) == (QUIZ, "b")  # missed first


def test_the_nearest_to_the_target_goes_first_ties_broken_as_before() -> None:
    pool = [(QUIZ, "right"), (QUIZ, "missed"), (QUIZ, "unseen"), (QUIZ, "far")]
    history = {(QUIZ, "right"): True, (QUIZ, "missed"): False}
    success = {(QUIZ, "right"): 0.75, (QUIZ, "missed"): 0.76, (QUIZ, "unseen"): 0.74,
               (QUIZ, "far"): 0.3}
    rng = random.Random(1)
    # answered right comes last; missed and unseen tie (within BAND): missed first
    assert selection.pick(pool, {}, history, rng, success, 0.75) == (QUIZ, "missed")
    success[(QUIZ, "missed")] = 0.45
    assert selection.pick(pool, {}, history, rng, success, 0.75) == (QUIZ, "unseen")
    assert selection.pick(pool, {}, history, rng, success, 0.3) == (QUIZ, "far")
    only_right = [(QUIZ, "right")]
    assert selection.pick(only_right, {}, history, rng, success, 0.3) == (QUIZ, "right")
