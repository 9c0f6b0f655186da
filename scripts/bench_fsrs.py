"""Review tuned to each person: how much better fitted FSRS parameters predict a person's recall
than the defaults, and what a refit costs; writes bench_fsrs.json, asserts nothing.

    .venv/bin/python scripts/bench_fsrs.py [--people 12] [--days 60] [--quick]
                                           [--json bench_fsrs.json]

1. Prediction: a simulated population (bot/core/review_simulation.py) whose memory follows
   FSRS with parameters of their own (they forget faster than the defaults assume), reviewing
   as quizbot schedules them. Each learner's parameters are fitted on their first 75% of days
   (bot/core/fsrs_fit.py), then the recall of their reviews in the remaining days is predicted:
   log loss and RMSE of the binned predicted recall (fsrs-rs's own evaluation), fitted beside
   the defaults (the floor) on the same held-out reviews, per learner.
2. A refit of a person with 10,000 reviews as the bot runs it (fit_in_child: the answers as
   JSON to a child process with one thread, which judges the fit on the person's latest
   reviews and fits again on them all): its wall time beside the same fit in this process
   (the floor: no child, no JSON, every thread), and the child's peak RSS beside that of the
   same child given no answers (Python and the modules it imports).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import Calibration, Row, part  # noqa: E402

from bot.core.fsrs_fit import fit, fit_in_child, reviews_and_cards  # noqa: E402
from bot.core.review_simulation import (  # noqa: E402
    held_out,
    learner_answers,
    learner_parameters,
    population,
)

BIG_REVIEWS = 10_000


def prediction(people: int, days: int, seed: int) -> list[Row]:
    measures = [held_out(answers, int(days * 0.75))
                for _, answers in population(people, days, 4, seed)]
    for n, m in enumerate(measures):
        print(f"learner {n}: {m.reviews:,} reviews fitted on, {m.held_out:,} held out: "
              f"log loss {m.fitted_loss:.3f} (defaults {m.default_loss:.3f}), "
              f"RMSE {m.fitted_rmse:.3f} (defaults {m.default_rmse:.3f})", flush=True)
    better = sum(m.fitted_loss < m.default_loss for m in measures)
    note = (f"{people} simulated learners, {days} days, fitted on the first 75%; "
            f"fitted better by log loss for {better} of {people}")
    return [
        Row("held-out log loss, fitted parameters", "", [m.fitted_loss for m in measures],
            [m.default_loss for m in measures], "the default parameters, same reviews",
            goal_ratio=1.0, note=note),
        Row("held-out RMSE of the binned recall, fitted parameters", "",
            [m.fitted_rmse for m in measures], [m.default_rmse for m in measures],
            "the default parameters, same reviews", goal_ratio=1.0),
    ]


def big_learner() -> list[Any]:
    """A learner with at least BIG_REVIEWS reviews (about 120 days of 9 new questions)."""
    parameters = learner_parameters(random.Random(11))
    days = 100
    while True:
        answers = learner_answers(parameters, days, 9, 11)
        if reviews_and_cards(answers)[0] >= BIG_REVIEWS:
            return answers
        days += 20


async def refit(repeat: int) -> list[Row]:
    answers = big_learner()
    reviews, cards = reviews_and_cards(answers)
    times, floors = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        await fit_in_child(answers)
        times.append(time.perf_counter() - start)
        start = time.perf_counter()
        fit(answers)
        floors.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the fits' children
    idle = await idle_child_peak()
    print(f"refit of {reviews:,} reviews over {cards:,} cards: "
          f"{statistics.median(times):.2f} s in the child (here "
          f"{statistics.median(floors):.2f} s), child's peak RSS {peak:.0f} MB "
          f"(a child that fits nothing {idle:.0f} MB)", flush=True)
    note = f"{reviews:,} reviews over {cards:,} cards, {len(answers):,} answers"
    return [
        Row("refit of a person with 10,000 reviews, in its child process", "s", times, floors,
            "the same fit in this process (no child, every thread)", note=note),
        Row("refit's child process, peak RSS", "MB", [peak], [idle],
            "the same child given no answers (Python and its imports)"),
    ]


async def idle_child_peak() -> float:
    """The peak RSS of the fit's child given no answers (Python and the modules it imports),
    run under a process of its own: RUSAGE_CHILDREN holds the largest child's."""
    code = ("import resource, subprocess, sys\n"
            "subprocess.run([sys.executable, '-m', 'bot.core.fsrs_fit'], input=b'[]',"
            " check=True, capture_output=True)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE, cwd=ROOT)
    out, _ = await child.communicate()
    return int(out.split()[-1]) / 1024


async def drive(args: argparse.Namespace) -> None:
    calibration = Calibration()
    rows = prediction(args.people, args.days, args.seed)
    rows += await refit(args.repeat)
    out = part("fsrs", "Review tuned to each person (FSRS fitted per person)",
               calibration.end(), rows)
    args.json.write_text(json.dumps({"parts": [out]}, indent=2, ensure_ascii=False) + "\n")
    print(f"written to {args.json}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--people", type=int, default=None)
    parser.add_argument("--days", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="4 learners, 40 days, one refit")
    parser.add_argument("--json", type=Path, default=Path("bench_fsrs.json"))
    args = parser.parse_args()
    args.people = args.people or (4 if args.quick else 12)
    args.days = args.days or (40 if args.quick else 60)
    args.repeat = args.repeat or (1 if args.quick else 3)
    asyncio.run(drive(args))


if __name__ == "__main__":
    main()
