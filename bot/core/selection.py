"""Which question to ask next: pure functions, no I/O.

With predictions (a person's chance of answering each candidate right, bot/core/difficulty.py)
the choice is the candidate nearest a target success rate: hard enough to teach, easy enough
not to discourage. Distances within BAND of each other count as a tie, which the old order
breaks (missed, then unseen, then what the chat had least); what the person already answered
right comes last either way."""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence

from bot.content.items import Kind, Quiz

Candidate = tuple[str, str]  # (quiz_id, question_id)
TARGET = 0.75  # the success rate aimed at unless a chat sets its own
MIN_TARGET, MAX_TARGET = 0.50, 0.95
BAND = 0.05  # predicted success rates this close to each other are a tie


def candidates(quizzes: Sequence[Quiz], kinds: Collection[Kind] | None = None) -> list[Candidate]:
    """The quizzes' questions (of `kinds` only, if given)."""
    return [(quiz.id, q.id) for quiz in quizzes for q in quiz.questions
            if kinds is None or q.kind in kinds]


def pick(
    pool: Sequence[Candidate],
    chat_counts: Mapping[Candidate, int],
    person_history: Mapping[Candidate, bool] | None,
    rng: random.Random,
    success: Mapping[Candidate, float] | None = None,
    target: float = TARGET,
) -> Candidate:
    """Prefer what this person missed, then what they have not seen, then what the chat had least.

    `person_history` is given only for a person alone (a private chat or the console); in a
    group everyone shares the chat's history. `success`: the predicted chance of a right
    answer per candidate; then the nearest to `target` goes first, among what is not yet
    answered right (the module's docstring).
    """
    if not pool:
        raise ValueError("no questions to pick from")

    def rank(c: Candidate) -> tuple[int, ...]:
        if person_history is None:
            tier = 0
        elif person_history.get(c) is False:
            tier = 0  # missed last time: worth another go
        elif c not in person_history:
            tier = 1
        else:
            tier = 2
        if success is None:
            return tier, chat_counts.get(c, 0)
        band = int(abs(success.get(c, target) - target) / BAND)
        return int(tier == 2), band, tier, chat_counts.get(c, 0)

    best = min(rank(c) for c in pool)
    return rng.choice([c for c in pool if rank(c) == best])


def shuffled_order(n: int, rng: random.Random) -> tuple[int, ...]:
    """order[shown] = canonical index."""
    order = list(range(n))
    rng.shuffle(order)
    return tuple(order)
