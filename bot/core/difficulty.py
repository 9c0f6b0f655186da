"""How hard each question is and how able each person is, learnt from the bot's own answers:
an Elo rating for learning (Pelánek 2016, "Applications of the Elo rating system in adaptive
educational systems"), the online form of the one-parameter (Rasch) model. Pure: the
materializer keeps the ratings (bot/storage/difficulty.py), selection.py reads predictions.

- A person's first answer to a question (later ones come after seeing the answer, and measure
  memory, which review.py's FSRS cards model) moves the person's ability θ and the question's
  difficulty d by the surprise: P = 1 / (1 + exp(d - θ)), θ += U(n)(right - P),
  d -= U(m)(right - P), where U(n) = ALPHA / (1 + BETA n) shrinks with the answers n each has
  had (Pelánek's uncertainty function: new ratings move fast, settled ones slowly).
- Both start at 0: the kept ratings are a function of the answers alone, so a rebuild gives
  the same figures whatever a pack says meanwhile. A question's authored difficulty (easy,
  medium, hard) enters when it is read (`difficulty_of`): as SEED_ANSWERS answers' worth of
  prior, which the question's own answers outweigh as they come.
- Per concept (a question's `meta.concepts`): each first answer keeps the logit it was
  predicted with (θ - d then) and whether it was right; a person's offset per concept is that
  history replayed (`concept_offsets`, the hierarchical "concept model" of the same paper:
  ability for a question = θ + the mean offset of its concepts, offsets moved by
  CONCEPT_WEIGHT U(n_c) times the surprise left after them). It is read when a person's next
  question is chosen (a few hundred rows), so the materializer needs no catalog.

Why Elo and not a fitted IRT model: the ratings change one answer at a time in the
materializer's order, so they are kept incrementally on both databases and a recount from the
answers gives the same numbers; a joint maximum-likelihood fit would be rerun over every
answer. docs/difficulty.md has the reasoning and the measured figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

ALPHA = 0.8  # U(0): how far the first answer moves a rating (logits per unit of surprise)
BETA = 0.1  # how fast U shrinks: U(10) = ALPHA / 2
CONCEPT_WEIGHT = 0.5  # a concept's offset moves by this share of the overall ability's step
SEEDS = {"easy": -1.0, "medium": 0.0, "hard": 1.0}  # an authored difficulty, in logits
SEED_ANSWERS = 20  # how many answers the authored difficulty weighs as
QuestionKey = tuple[str, str]  # (quiz_id, question_id)


def expected(ability: float, difficulty: float) -> float:
    """The chance of a right answer (the logistic of ability - difficulty)."""
    x = ability - difficulty
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def uncertainty(answers: int) -> float:
    """U(n): the step after n answers."""
    return ALPHA / (1.0 + BETA * answers)


@dataclass(frozen=True, slots=True)
class Rating:
    """An ability or a difficulty, in logits, and the answers that made it."""

    value: float = 0.0
    answers: int = 0

    def moved(self, by: float) -> Rating:
        return Rating(self.value + uncertainty(self.answers) * by, self.answers + 1)


@dataclass(frozen=True, slots=True)
class First:
    """A person's first answer to a question as the model met it: the how-manieth of theirs
    (`seq`, their order), the logit predicted for it (θ - d before it) and its rightness."""

    seq: int
    logit: float
    correct: bool


@dataclass(slots=True)
class Ratings:
    """Ratings as answers move them, in the materializer's order (the storage loads the rows
    a chunk touches into one of these; the tests and the recount fill it from nothing)."""

    people: dict[str, Rating] = field(default_factory=dict)
    questions: dict[QuestionKey, Rating] = field(default_factory=dict)
    firsts: dict[tuple[str, str, str], First] = field(default_factory=dict)

    def answer(self, person: str, quiz: str, question: str, correct: bool) -> bool:
        """Apply one answer; False if it is not the person's first to the question."""
        key = (person, quiz, question)
        if key in self.firsts:
            return False
        ability = self.people.get(person, Rating())
        difficulty = self.questions.get((quiz, question), Rating())
        logit = ability.value - difficulty.value
        surprise = float(correct) - expected(ability.value, difficulty.value)
        self.people[person] = ability.moved(surprise)
        self.questions[(quiz, question)] = difficulty.moved(-surprise)
        self.firsts[key] = First(ability.answers, logit, correct)
        return True


def difficulty_of(kept: Rating | None, authored: str | None) -> float:
    """A question's difficulty for predictions: its kept rating, with the authored one as
    SEED_ANSWERS answers of prior (none stated: medium)."""
    seed = SEEDS.get(authored or "medium", 0.0)
    if kept is None:
        return seed
    return (SEED_ANSWERS * seed + kept.answers * kept.value) / (SEED_ANSWERS + kept.answers)


def success_for_someone_new(kept: Rating | None, authored: str | None) -> float:
    """The chance that someone new (ability 0, where everyone starts) answers the question
    right: its difficulty as a share an organiser reads (the dashboard's Questions page)."""
    return expected(0.0, difficulty_of(kept, authored))


def concept_offsets(
    firsts: Iterable[tuple[First, Sequence[str]]],
) -> dict[str, Rating]:
    """A person's offset per concept from their first answers with their questions' concepts
    (any order: replayed in theirs)."""
    offsets: dict[str, Rating] = {}
    for first, concepts in sorted(firsts, key=lambda f: f[0].seq):
        if not concepts:
            continue
        shift = sum(offsets.get(c, Rating()).value for c in concepts) / len(concepts)
        surprise = float(first.correct) - expected(first.logit + shift, 0.0)
        for concept in concepts:
            offset = offsets.get(concept, Rating())
            offsets[concept] = Rating(
                offset.value + CONCEPT_WEIGHT * uncertainty(offset.answers) * surprise,
                offset.answers + 1)
    return offsets


@dataclass(frozen=True, slots=True)
class Learner:
    """What predicts one person's success: their overall ability and concept offsets."""

    ability: Rating = Rating()
    offsets: dict[str, Rating] = field(default_factory=dict)

    def ability_for(self, concepts: Sequence[str]) -> float:
        if not concepts:
            return self.ability.value
        shift = sum(self.offsets.get(c, Rating()).value for c in concepts) / len(concepts)
        return self.ability.value + shift

    def success(self, difficulty: float, concepts: Sequence[str] = ()) -> float:
        """The predicted chance that they answer a question of this difficulty right."""
        return expected(self.ability_for(concepts), difficulty)


def learner(
    ability: Rating | None, firsts: Iterable[tuple[QuestionKey, First]],
    concepts_of: Callable[[QuestionKey], Sequence[str]],
) -> Learner:
    """A person's Learner from their kept rows; `concepts_of` names a question's concepts
    (the catalog's; a question gone from it has none)."""
    return Learner(ability or Rating(),
                   concept_offsets((first, concepts_of(key)) for key, first in firsts))
