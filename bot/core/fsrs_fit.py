"""FSRS parameters fitted to one person's own answers, with fsrs-rs (Rust, through
fsrs-rs-python: the optimizer Anki runs, without torch), and how well a set of parameters
predicts a person's recall.

A person's answers become the optimizer's items as review.py replays them: each question is a
card, each answer rated by deck.rating, the days between two answers of a card counted in UTC
days (the optimizer's unit). An item is one review of a card on a later day than the answer
before it, with the whole history of the card up to it (the example of fsrs-rs-python's
train_csv.py): the optimizer predicts its recall from that history.

Enough history: fsrs-rs trains every parameter only from 64 such items (below 8 it returns the
defaults, below 64 it fits the four first stabilities alone; fsrs-rs src/training.rs
compute_parameters), after it drops outliers. A person is fitted once they have MIN_REVIEWS
reviews over MIN_CARDS cards (reviews: answers to a card answered before), and the fit is kept
only where it predicts the person's latest reviews, held out of it, better than the defaults
(lower log loss; Anki likewise keeps its current parameters when a new fit is not better).

The fit holds the GIL for its whole run (fsrs-rs-python releases it nowhere), so it runs in a
child process (`fit_in_child`), with its memory and time bounded, never in the bot's event
loop or one of its threads.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from datetime import UTC, date

from fsrs.scheduler import (
    DEFAULT_PARAMETERS,
    LOWER_BOUNDS_PARAMETERS,
    UPPER_BOUNDS_PARAMETERS,
)

from bot.core.deck import rating
from bot.core.ports import ReviewAnswer
from bot.core.ports import ReviewFit as Fit

MIN_REVIEWS = 300  # reviews (answers to a card seen before) before a person is fitted...
MIN_CARDS = 20  # ...over this many cards
MIN_ITEMS = 64  # the optimizer's own floor for fitting every parameter (see above)
REFIT_AFTER = 100  # new reviews since the last fit before another
CHILD_SECONDS = 120.0  # a fit taking longer is stopped (10,000 reviews take a few seconds)
CHILD_MEMORY = 1 << 30  # the child's address space, bytes
HELD_OUT = 0.2  # the share of a person's latest reviews a fit is judged on
PARAMETER_COUNT = len(DEFAULT_PARAMETERS)  # FSRS-6: 21, what fsrs.Scheduler takes

Parameters = tuple[float, ...]


def reviews_and_cards(answers: Iterable[ReviewAnswer]) -> tuple[int, int]:
    """(reviews, cards) of a person's answers: a review is an answer to a card seen before."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for a in answers:
        counts[(a.quiz_id, a.question_id)] += 1
    return sum(counts.values()) - len(counts), len(counts)


def enough(reviews: int, cards: int) -> bool:
    return reviews >= MIN_REVIEWS and cards >= MIN_CARDS


def histories(answers: Iterable[ReviewAnswer]) -> list[list[tuple[date, int]]]:
    """Each card's (UTC day, rating) in answer order (the answers come oldest first)."""
    cards: dict[tuple[str, str], list[tuple[date, int]]] = defaultdict(list)
    for a in answers:
        cards[(a.quiz_id, a.question_id)].append(
            (a.answered_at.astimezone(UTC).date(), int(rating(a))))
    return list(cards.values())


def item_reviews(history: Sequence[tuple[date, int]], since: date | None = None
                 ) -> list[list[tuple[int, int]]]:
    """A card's items as (rating, days since the answer before) lists: one per answer on a
    later day than the one before it (only those on or after `since`, if given)."""
    reviews: list[tuple[int, int]] = []
    items: list[list[tuple[int, int]]] = []
    last = history[0][0] if history else None
    for day, rated in history:
        assert last is not None
        delta = (day - last).days
        reviews.append((rated, delta))
        if delta > 0 and (since is None or day >= since):
            items.append(list(reviews))
        last = day
    return items


def items_of(answers: Iterable[ReviewAnswer], since: date | None = None
             ) -> list[list[tuple[int, int]]]:
    return [item for h in histories(answers) for item in item_reviews(h, since)]


def checked(raw: Sequence[float]) -> Parameters:
    """The optimizer's parameters as fsrs.Scheduler takes them: FSRS-6's 21 (an older count is
    filled in by fsrs-rs itself), each rounded and held within the Scheduler's bounds (the
    optimizer's float32 may pass a bound by a rounding error). Anything else is refused."""
    import fsrs_rs_python

    filled = list(fsrs_rs_python.check_and_fill_parameters(list(raw)))
    if len(filled) != PARAMETER_COUNT or not all(math.isfinite(w) for w in filled):
        raise ValueError(f"the optimizer gave {len(filled)} parameters, not {PARAMETER_COUNT}")
    return tuple(min(max(round(w, 6), low), high) for w, low, high in
                 zip(filled, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS, strict=True))


def evaluate(parameters: Sequence[float], items: Sequence[Sequence[tuple[int, int]]]
             ) -> tuple[float, float]:
    """(log loss, RMSE of the binned predicted recall) of `parameters` on `items`."""
    import fsrs_rs_python as rs

    result = rs.FSRS(list(parameters)).evaluate(
        [rs.FSRSItem([rs.FSRSReview(r, d) for r, d in item]) for item in items])
    return float(result.log_loss), float(result.rmse_bins)


def optimize(items: Sequence[Sequence[tuple[int, int]]]) -> Parameters:
    import fsrs_rs_python as rs

    fsrs_items = [rs.FSRSItem([rs.FSRSReview(r, d) for r, d in item]) for item in items]
    return checked(rs.FSRS(list(DEFAULT_PARAMETERS)).compute_parameters(fsrs_items))


def split_day(answers: Sequence[ReviewAnswer]) -> date:
    """The day before which HELD_OUT's complement of the person's items falls: the fit is
    judged on the items from it on, as it will be used: on reviews it has not seen."""
    days = sorted(item_day for h in histories(answers)
                  for item_day, _ in _item_days(h))
    return days[min(len(days) - 1, int(len(days) * (1 - HELD_OUT)))]


def _item_days(history: Sequence[tuple[date, int]]) -> list[tuple[date, int]]:
    return [(day, n) for n, (day, _) in enumerate(history)
            if n and (day - history[n - 1][0]).days > 0]


def fit(answers: Sequence[ReviewAnswer]) -> Fit:
    """The person's parameters from their answers (oldest first); in this process. Judged
    first on their latest reviews (HELD_OUT) by parameters fitted on the answers before them:
    kept only where those predict the held-out reviews better than the defaults; then fitted
    again on every answer. The figures are the held-out ones."""
    reviews, cards = reviews_and_cards(answers)
    items = items_of(answers)
    if not enough(reviews, cards) or len(items) < MIN_ITEMS:
        return Fit(None, reviews, len(items))
    split = split_day(answers)
    before = items_of([a for a in answers if a.answered_at.astimezone(UTC).date() < split])
    after = items_of(answers, since=split)
    if len(before) < MIN_ITEMS or not after:
        return Fit(None, reviews, len(items))
    default_loss, default_rmse = evaluate(DEFAULT_PARAMETERS, after)
    fitted_loss, fitted_rmse = evaluate(optimize(before), after)
    better = fitted_loss < default_loss
    return Fit(optimize(items) if better else None, reviews, len(items),
               default_loss, fitted_loss, default_rmse, fitted_rmse)


# the child process ---------------------------------------------------------------------
def _answer_row(a: ReviewAnswer) -> list[object]:
    return [a.quiz_id, a.question_id, a.correct, a.answered_at.isoformat(), a.elapsed_ms,
            a.personal, a.confidence]


def _answer_of(row: list[object]) -> ReviewAnswer:
    from datetime import datetime

    quiz, question, correct, at, elapsed, personal, confidence = row
    return ReviewAnswer(str(quiz), str(question), bool(correct),
                        datetime.fromisoformat(str(at)), int(str(elapsed)), bool(personal),
                        None if confidence is None else int(str(confidence)))


async def fit_in_child(answers: Sequence[ReviewAnswer], seconds: float = CHILD_SECONDS,
                       memory: int = CHILD_MEMORY) -> Fit:
    """`fit` in a child process (one CPU thread, `memory` bytes of address space), stopped
    after `seconds` (TimeoutError). The answers go in on stdin, the fit comes out on stdout,
    as JSON."""
    env = {**os.environ, "RAYON_NUM_THREADS": "1", "QUIZBOT_FIT_MEMORY": str(memory)}
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.core.fsrs_fit", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    data = json.dumps([_answer_row(a) for a in answers]).encode()
    try:
        out, err = await asyncio.wait_for(child.communicate(data), seconds)
    except BaseException:  # out of time, or cancelled (a shutdown): no child left behind
        child.kill()
        await child.wait()
        raise
    if child.returncode != 0:
        raise RuntimeError(f"the fit's process failed ({child.returncode}): "
                           f"{err.decode(errors='replace')[-400:]}")
    got = json.loads(out)
    parameters = got.pop("parameters")
    return Fit(None if parameters is None else tuple(parameters), **got)


def main() -> None:
    """The child: bound its memory, read the answers, print the fit."""
    import resource

    memory = int(os.environ.get("QUIZBOT_FIT_MEMORY", CHILD_MEMORY))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    answers = [_answer_of(row) for row in json.load(sys.stdin)]
    print(json.dumps(asdict(fit(answers))))


if __name__ == "__main__":
    main()
