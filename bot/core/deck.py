"""The FSRS rules of spaced review, pure: how an answer rates its card and moves it. One
FSRS per set of parameters (fuzzing off, so a replay always gives the same due dates): the
defaults, or a person's own once fitted (bot/core/fsrs_fit.py), used by review.py's replay and
by the materializers' card table (bot/storage/cards.py), so the two cannot differ."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from fsrs import Card, Rating, State
from fsrs import Scheduler as Fsrs

from bot.core.ports import ReviewAnswer

FAST = timedelta(seconds=10)  # right within this on one's own question: Easy
SLOW = timedelta(seconds=60)  # right after more than this: Hard

FSRS = Fsrs(enable_fuzzing=False)  # deterministic: a replay gives the same due dates


@lru_cache(maxsize=1024)
def scheduler(parameters: tuple[float, ...] | None) -> Fsrs:
    """The FSRS of a person's fitted parameters (None: the defaults' FSRS)."""
    return FSRS if parameters is None else Fsrs(parameters=parameters, enable_fuzzing=False)


# models.Confidence's values, as stored (the core's models are not imported by the storage's
# card table, which uses these rules too)
GUESSING, THINK_SO, SURE = 0, 1, 2


def misconception(answer: ReviewAnswer) -> bool:
    """Wrong while sure: the misconception to review first."""
    return not answer.correct and answer.confidence == SURE


def rating(answer: ReviewAnswer) -> Rating:
    """How an answer rates its card. Where the person said how sure they were, that says
    more than the time taken: a wrong answer is Again however sure (and a sure one is a
    misconception, reviewed first: Deck.due); a right guess is Hard, since it was not
    recalled; "think so" is Good; sure and right is Easy on their own question (quick
    recall is what Easy means) and Good in a shared chat, as the time there is not theirs."""
    if not answer.correct:
        return Rating.Again
    if answer.confidence == GUESSING:
        return Rating.Hard
    if answer.confidence == THINK_SO:
        return Rating.Good
    if answer.confidence == SURE:
        return Rating.Easy if answer.personal else Rating.Good
    if not answer.personal:
        return Rating.Good
    elapsed = timedelta(milliseconds=answer.elapsed_ms)
    if elapsed <= FAST:
        return Rating.Easy
    if elapsed > SLOW:
        return Rating.Hard
    return Rating.Good


def moved(card: Card | None, answer: ReviewAnswer, card_id: int = 1, fsrs: Fsrs = FSRS
          ) -> Card:
    """The card after `answer` (None: its first answer creates it), scheduled by `fsrs`."""
    when = answer.answered_at.astimezone(UTC)
    if card is None:
        card = Card(card_id=card_id, due=when)  # an id: Card() would sleep
    after, _ = fsrs.review_card(card, rating(answer), when)
    return after


def lapsed(card: Card | None, answer: ReviewAnswer) -> bool:
    """A wrong answer to a card in review (a lapse, as Anki counts them)."""
    return card is not None and card.state == State.Review and not answer.correct


@dataclass
class Deck:
    """A person's cards, replayed from their answers with their FSRS (`fsrs`)."""

    fsrs: Fsrs = field(default_factory=lambda: FSRS)  # the defaults' until fitted
    cards: dict[tuple[str, str], Card] = field(default_factory=dict)
    reviews: int = 0  # answers to a card already seen before
    right: int = 0  # of those, answered right
    # cards whose latest answer was wrong while sure (misconception)
    misconceptions: set[tuple[str, str]] = field(default_factory=set)

    def apply(self, answer: ReviewAnswer) -> None:
        key = (answer.quiz_id, answer.question_id)
        card = self.cards.get(key)
        if card is not None:
            self.reviews += 1
            self.right += answer.correct
        self.cards[key] = moved(card, answer, len(self.cards) + 1, self.fsrs)
        if misconception(answer):
            self.misconceptions.add(key)
        else:
            self.misconceptions.discard(key)

    def due(self, now: datetime) -> list[tuple[str, str]]:
        """Cards due at `now`: misconceptions first, then the longest overdue first."""
        due = [(key not in self.misconceptions, card.due, key)
               for key, card in self.cards.items() if card.due <= now]
        return [key for _, _, key in sorted(due)]

    def retention(self, now: datetime, keep: Callable[[tuple[str, str]], bool]) -> float | None:
        """The mean predicted recall now of the cards `keep` accepts (None: no card)."""
        recall = [self.fsrs.get_card_retrievability(card, now)
                  for key, card in self.cards.items() if keep(key)]
        return sum(recall) / len(recall) if recall else None

    def next_due(self, now: datetime, keep: Callable[[tuple[str, str]], bool]) -> datetime | None:
        """When the first card not due at `now` (of those `keep` accepts) becomes due."""
        return min((card.due for key, card in self.cards.items()
                    if card.due > now and keep(key)), default=None)
