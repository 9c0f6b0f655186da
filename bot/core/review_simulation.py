"""Simulated learners whose memory follows FSRS with parameters of their own (not the defaults),
reviewing as quizbot schedules them: the measure of a per-person fit (bot/core/fsrs_fit.py).

Each learner meets a few new questions a day and, once a day, answers every card the bot has
due, the bot scheduling with the default parameters (as it does until a person is fitted).
Whether an answer is right is drawn from the learner's true recall at that moment (their own
FSRS card, moved by the same ratings); a right answer is quick, middling or slow, so deck.rating
gives it Easy, Good or Hard as it would a real one. Seeded: the same seed gives the same answers.

`held_out` is the measure: fit on a learner's answers before a day, then predict the recall of
their reviews from that day on (items of their whole history up to each), with the fitted and
with the default parameters: log loss and RMSE of the binned predicted recall, lower is better.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from fsrs import Card, Rating
from fsrs import Scheduler as Fsrs
from fsrs.scheduler import DEFAULT_PARAMETERS, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

from bot.core.deck import FAST, SLOW, Deck
from bot.core.fsrs_fit import Parameters, evaluate, items_of, optimize
from bot.core.ports import ReviewAnswer

START = datetime(2026, 1, 5, tzinfo=UTC)
QUIZ = "sim"
# how long a right answer took, by how well it was recalled (deck.rating reads it back)
ELAPSED = {Rating.Easy: FAST // 2, Rating.Good: (FAST + SLOW) / 2, Rating.Hard: SLOW * 1.5}


def learner_parameters(rng: random.Random) -> Parameters:
    """A learner who forgets faster than the defaults assume: first stabilities a fraction of
    theirs, slower growth after a success, and a steeper forgetting curve."""
    w = list(DEFAULT_PARAMETERS)
    scale = rng.uniform(0.1, 0.3)
    for i in range(4):
        w[i] *= scale
    w[8] *= rng.uniform(0.5, 0.8)
    w[20] = rng.uniform(0.35, 0.6)
    return tuple(min(max(x, low), high) for x, low, high in
                 zip(w, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS, strict=True))


def learner_answers(parameters: Parameters, days: int, new_per_day: int, seed: int
                    ) -> list[ReviewAnswer]:
    """A learner's answers over `days`, oldest first."""
    rng = random.Random(seed)
    truth = Fsrs(parameters=parameters, enable_fuzzing=False)
    deck = Deck()  # the bot's view: the default parameters
    memory: dict[str, Card] = {}
    answers: list[ReviewAnswer] = []
    for day in range(days):
        session = START + timedelta(days=day, hours=rng.uniform(8, 20))
        due = [q for _, q in deck.due(session)]
        new = [f"q{len(memory) + n}" for n in range(new_per_day)]
        for n, question in enumerate([*due, *new]):
            when = session + timedelta(seconds=40 * n)
            card = memory.get(question)
            recall = 0.5 if card is None else truth.get_card_retrievability(card, when)
            grade = Rating.Again if rng.random() >= recall else rng.choices(
                (Rating.Hard, Rating.Good, Rating.Easy), (0.2, 0.6, 0.2))[0]
            elapsed = ELAPSED.get(grade, (FAST + SLOW) / 2)
            answer = ReviewAnswer(QUIZ, question, grade != Rating.Again, when,
                                  int(elapsed.total_seconds() * 1000), True)
            memory[question], _ = truth.review_card(
                card or Card(card_id=len(memory) + 1, due=when), grade, when)
            deck.apply(answer)
            answers.append(answer)
    return answers


@dataclass(frozen=True, slots=True)
class Measure:
    """Held-out prediction of one learner's recall (lower is better)."""

    reviews: int  # the learner's reviews in the training part
    held_out: int  # items predicted
    default_loss: float
    fitted_loss: float
    default_rmse: float
    fitted_rmse: float


def held_out(answers: list[ReviewAnswer], split_day: int) -> Measure:
    split = START + timedelta(days=split_day)
    train = [a for a in answers if a.answered_at < split]
    test = items_of(answers, since=split.date())
    fitted = optimize(items_of(train))
    default_loss, default_rmse = evaluate(DEFAULT_PARAMETERS, test)
    fitted_loss, fitted_rmse = evaluate(fitted, test)
    seen: set[str] = set()
    reviews = 0
    for a in train:
        reviews += a.question_id in seen
        seen.add(a.question_id)
    return Measure(reviews, len(test), default_loss, fitted_loss, default_rmse, fitted_rmse)


def population(people: int, days: int, new_per_day: int, seed: int
               ) -> list[tuple[Parameters, list[ReviewAnswer]]]:
    rng = random.Random(seed)
    out = []
    for n in range(people):
        parameters = learner_parameters(rng)
        out.append((parameters, learner_answers(parameters, days, new_per_day, seed * 1000 + n)))
    return out
