"""Which of a person's topics (quizzes) the dashboard calls weak: the People page's
"Weakest topics" and the People sheet of an export.

Naming the lowest of someone's topics whatever its accuracy called a topic answered 88%
right "weakest", which tells an organiser to send them back to revise what they know. A
topic is weak here only when all three hold:

- at least MIN_ANSWERS answers to it: one miss out of one is chance, not a weakness;
- below WEAK_BELOW right, the usual pass line of classroom tests: above it the topic is
  known well enough that revising it is not what the person needs first;
- below the chat's own accuracy over all its answers: where a hard pack keeps everyone at
  55%, the people at 65% on a topic are not the ones to single out; the Questions page is
  where a topic hard for everyone shows.
"""

from __future__ import annotations

from collections.abc import Mapping

MIN_ANSWERS = 3
WEAK_BELOW = 0.70


def is_weak(answered: int, right: int, chat_accuracy: float) -> bool:
    if answered < MIN_ANSWERS:
        return False
    accuracy = right / answered
    return accuracy < WEAK_BELOW and accuracy < chat_accuracy


def weakest(topics: Mapping[str, tuple[int, int]], chat_accuracy: float, most: int
            ) -> list[str]:
    """The weak ones of `topics` ((answered, right) by quiz id), the lowest accuracy first
    (ties by id), at most `most`."""
    weak = [(right / answered, quiz) for quiz, (answered, right) in topics.items()
            if is_weak(answered, right, chat_accuracy)]
    return [quiz for _, quiz in sorted(weak)[:most]]
