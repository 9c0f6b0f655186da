"""What a batch of answers adds to the boards' aggregates, summed in memory: the one rule
both materializers (sqlite/materializer.py, postgres/materializer.py) apply, each then writing
the sums with its own statements."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Generic, TypeVar

Day = TypeVar("Day", str, date)  # a day as the backend stores it: "YYYY-MM-DD" or a date
Sums = list[int]  # correct, answered, time_ms


@dataclass
class Batch(Generic[Day]):
    scores: dict[tuple[str, Day, str], Sums] = field(default_factory=dict)  # chat, day, person
    totals: dict[tuple[str, str], Sums] = field(default_factory=dict)  # chat, person
    runs: dict[str, list[bool]] = field(default_factory=dict)  # person: correct, in order

    def week(self, first: Day) -> dict[tuple[str, str], Sums]:
        """The scores of the days from `first` on (the week window, once rolled to the
        batch's newest day), summed per chat and person."""
        week: dict[tuple[str, str], Sums] = {}
        for (chat, day, person), values in self.scores.items():
            if day >= first:
                _add(week, (chat, person), values)
        return week


def aggregate(rows: Iterable[tuple[str, str, object, int, Day]]) -> Batch[Day]:
    """Rows of (chat, person, correct, elapsed_ms, day), in the order they were answered;
    each counts in its chat and in every chat ("*")."""
    batch: Batch[Day] = Batch()
    for chat, person, correct, elapsed, day in rows:
        values = [int(bool(correct)), 1, int(elapsed)]
        for key in ((chat, day, person), ("*", day, person)):
            _add(batch.scores, key, values)
        for pair in ((chat, person), ("*", person)):
            _add(batch.totals, pair, values)
        batch.runs.setdefault(person, []).append(bool(correct))
    return batch


def streaks(stored: tuple[int, int], corrects: Iterable[bool]) -> tuple[int, int]:
    """A person's run of correct answers (current, best) continued through more answers."""
    current, best = stored
    for correct in corrects:
        current = current + 1 if correct else 0
        best = max(best, current)
    return current, best


K = TypeVar("K")


def _add(into: dict[K, Sums], key: K, values: Sums) -> None:
    if (acc := into.get(key)) is None:
        into[key] = list(values)
    else:
        for i, value in enumerate(values):
            acc[i] += value
