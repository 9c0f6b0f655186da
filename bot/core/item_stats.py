"""Item analysis: which questions work. Pure computation on stored answers; no I/O.

For every question of a quiz, from each person's first answer to it (`ItemResponse`, read by
`ItemStore.item_responses`):

- answered, and the share right;
- the share on each option, by canonical option (as in the pack), so shuffles do not matter;
  `order` then says which letter each option had where the report is read (`shown_options`);
- discrimination: the point-biserial correlation between getting this question right (1 or 0)
  and the person's score on the *other* questions of the quiz (the corrected item-total
  correlation). People answer different subsets of a quiz, so the score on the other questions
  is their share right among the other questions they answered; when everyone answered every
  question this is the number right divided by a constant, which leaves the correlation
  unchanged. Someone who answered no other question has no such score and is left out of it.
  It is None when undefined: fewer than two such people, or everyone right (or everyone
  wrong) on this question, or everyone with the same score on the others;
- the median answer time;
- flags, only from MIN_ANSWERS answers up (a handful of answers says nothing): too easy (share
  right above TOO_EASY), too hard (below TOO_HARD), a distractor chosen more often than the
  answer, discrimination below NEGATIVE_BELOW (from MIN_ANSWERS people with a score on the
  others);
- the difficulty the pack states beside the one observed, from MIN_ANSWERS answers up: easy
  from OBSERVED_EASY right, hard below OBSERVED_HARD (four options give a guesser 25%),
  medium between.

Rightness is counted against the pack's current answer key (option == answer), so the share
right always equals the share on the correct option, also after an answer key was fixed. An
answer to a question no longer in the pack, or to an option it no longer has, is left out
and counted in `QuizReport.stale`.

The kinds not answered with one option are graded again from their stored response against
the current key (bot/core/grading.py, `regrade`): a multi's picks count for each option picked
(they add up to more than the answers); a number's, a text's and an order's most common
answers are listed (`typed`, ✓ where right) with the most common wrong ones (`wrong`), and
they have no option bars.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace

from bot.content import Catalog, Quiz
from bot.content.items import DEFAULT_LOCALE, Kind, Question
from bot.core import answer_text, grading
from bot.core.models import (
    MIN_ANSWERS,
    ONE_OPTION,
    Flag,
    ItemStats,
    QuizReport,
)
from bot.core.ports import ItemFigures, ItemGroup, ItemResponse


def _median(values: Sequence[float]) -> float:
    import statistics  # with fractions and decimal: imported by the first analysis only

    return statistics.median(values)


TOO_EASY = 0.9  # share right above this: too easy
TOO_HARD = 0.2  # share right below this: too hard
# discrimination below this: negative. A correlation a hair under 0 is noise at the sizes a
# study group produces; -0.1 is the usual floor below which an item is reviewed.
NEGATIVE_BELOW = -0.1
TYPED_SHOWN = 5  # a typed kind's most common answers listed
WRONG_SHOWN = 3  # and its most common wrong ones


def analyse(
    catalog: Catalog,
    responses: Iterable[ItemResponse],
    quiz_id: str | None = None,
    locale: str = DEFAULT_LOCALE,
) -> list[QuizReport]:
    """One report per quiz that has answers (or just `quiz_id`'s, answered or not), in
    catalog order. Answers to quizzes no longer in the catalog are left out."""
    by_quiz: dict[str, list[ItemResponse]] = defaultdict(list)
    for response in responses:
        by_quiz[response.quiz_id].append(response)
    wanted = [quiz_id] if quiz_id is not None else list(by_quiz)
    return [
        analyse_quiz(quiz, by_quiz.get(quiz.id, ()), locale)
        for quiz in catalog
        if quiz.id in wanted
    ]


def analyse_quiz(
    quiz: Quiz, responses: Iterable[ItemResponse], locale: str = DEFAULT_LOCALE
) -> QuizReport:
    """A quiz's items from its responses; only each person's first answer to a question
    counts (later ones are ignored, so a caller may pass every answer in order)."""
    questions = {q.id: q for q in quiz.questions}
    keys = {q.id: grading.Key.of(q) for q in quiz.questions}
    counts = {q.id: [0] * (len(q.options) if q.kind in (*ONE_OPTION, Kind.MULTI) else 0)
              for q in quiz.questions}
    times: dict[str, list[int]] = {q.id: [] for q in quiz.questions}
    typed: dict[str, Counter[tuple[str, bool]]] = defaultdict(Counter)
    graded: Counter[tuple[str, bool]] = Counter()  # (question, right) of the other kinds
    # person -> question -> right (1) or wrong (0), from the first answer only
    scores: dict[str, dict[str, int]] = defaultdict(dict)
    stale = 0
    for r in responses:
        if r.quiz_id != quiz.id or r.question_id in scores.get(r.person_key, ()):
            continue
        question = questions.get(r.question_id)
        if question is None:
            stale += 1
            continue
        if question.kind in ONE_OPTION:
            if not 0 <= r.option < len(question.options):
                stale += 1
                continue
            ok = r.option == question.answer
            counts[r.question_id][r.option] += 1
        else:
            again = grading.regrade(keys[question.id], r.option, r.response)
            if again is None:
                stale += 1
                continue
            ok = again
            graded[(question.id, ok)] += 1
            if question.kind is Kind.MULTI:
                for c in grading.stored_options(r.response):
                    if 0 <= c < len(question.options):
                        counts[r.question_id][c] += 1
            else:
                typed[question.id][(_as_read(question, r.response, locale), ok)] += 1
        scores[r.person_key][r.question_id] = int(ok)
        times[r.question_id].append(r.elapsed_ms)

    items = []
    for question in quiz.questions:
        right: list[float] = []
        rest: list[float] = []
        for person_scores in scores.values():
            if question.id in person_scores and len(person_scores) > 1:
                mine = person_scores[question.id]
                others = len(person_scores) - 1
                right.append(float(mine))
                rest.append((sum(person_scores.values()) - mine) / others)
        item_times = times[question.id]
        item = ItemStats(
            question_id=question.id,
            prompt=question.prompt.get(locale),
            answer=question.answer,
            option_counts=tuple(counts[question.id]),
            discrimination=correlation(right, rest),
            discriminated=len(right),
            median_ms=_median(item_times) if item_times else None,
            flags=(),
            options=tuple(option.text.get(locale) for option in question.options),
            stated=_stated(question),
        )
        items.append(_flagged(_with_kind(item, question, graded[(question.id, True)],
                                         graded[(question.id, False)], typed[question.id])))
    return QuizReport(quiz.id, quiz.title.get(locale), len(scores), tuple(items), stale)


def _as_read(question: Question, response: str | None, locale: str) -> str:
    """A typed kind's stored answer as a reader reads it: the number with its unit, the
    text; an order as the pack's numbers of its items ("2 → 1 → 3")."""
    if question.kind is Kind.ORDER:
        return answer_text.ARROW.join(str(c + 1) for c in grading.stored_options(response))
    return answer_text.response_text(question, (), response, locale)


def _with_kind(
    item: ItemStats, question: Question, right: int, wrong: int,
    typed: Counter[tuple[str, bool]] | None = None,
) -> ItemStats:
    """`item` with the figures of a kind not answered with one option (a choice's as is)."""
    if question.kind in ONE_OPTION:
        return item
    typed = typed or Counter()
    wrongs: Counter[str] = Counter({text: n for (text, ok), n in typed.items() if not ok})
    return replace(
        item, kind=question.kind, total=right + wrong, right_count=right,
        right_options=tuple(sorted(question.answers)),
        typed=tuple((text, n, ok) for (text, ok), n in typed.most_common(TYPED_SHOWN)),
        wrong=tuple(wrongs.most_common(WRONG_SHOWN)),
    )


def analyse_figures(
    catalog: Catalog, figures: ItemFigures, locale: str = DEFAULT_LOCALE
) -> list[QuizReport]:
    """What `analyse` reports of a chat, from the figures the materializer keeps of its first
    answers (ItemStore.item_figures) instead of the answers: the same counts, shares,
    discrimination and flags, whatever the chat's size; no median time (no times are kept).
    A group's rightness is the answers' as scored when given (`analyse` scores the first
    answers against the current key: the two differ only after an answer key was fixed)."""
    options: dict[str, dict[str, dict[int, int]]] = defaultdict(lambda: defaultdict(dict))
    for quiz_id, question_id, option, people in figures.options:
        options[quiz_id][question_id][option] = people
    groups: dict[str, dict[str, list[ItemGroup]]] = defaultdict(lambda: defaultdict(list))
    for group in figures.groups:
        groups[group.quiz_id][group.question_id].append(group)
    given: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for quiz_id, question_id, response, people in figures.responses:
        given[(quiz_id, question_id)][response] += people
    reports = []
    for quiz in catalog:
        if quiz.id not in options:
            continue
        counted = options[quiz.id]
        known = {q.id: q for q in quiz.questions}
        stale = sum(n for question_id, by_option in counted.items()
                    for option, n in by_option.items()
                    if question_id not in known or option >= len(known[question_id].options))
        # each person is in `answered` rows of each size: people = sum of rows / size
        sizes: Counter[int] = Counter()
        for rows in groups[quiz.id].values():
            for group in rows:
                sizes[group.answered] += group.people
        items = []
        for question in quiz.questions:
            by_option = counted.get(question.id, {})
            discrimination, discriminated = group_correlation(groups[quiz.id][question.id])
            # the other kinds' first answers are counted as option -1, right as scored; their
            # responses give a multi's picks per option and the others' common answers
            right = sum(g.people for g in groups[quiz.id][question.id] if g.right)
            one = question.kind in ONE_OPTION
            responses = given[(quiz.id, question.id)]
            key = grading.Key.of(question)
            picks: Counter[int] = Counter()
            typed: Counter[tuple[str, bool]] = Counter()
            for response, n in responses.items():
                if question.kind is Kind.MULTI:
                    for c in grading.stored_options(response):
                        picks[c] += n
                elif not one:
                    typed[(_as_read(question, response, locale),
                           bool(grading.regrade(key, -1, response)))] += n
            items.append(_flagged(_with_kind(ItemStats(
                question_id=question.id,
                prompt=question.prompt.get(locale),
                answer=question.answer,
                option_counts=tuple(by_option.get(i, 0) for i in range(len(question.options)))
                if one else tuple(picks.get(i, 0) for i in range(len(question.options)))
                if question.kind is Kind.MULTI else (),
                discrimination=discrimination,
                discriminated=discriminated,
                median_ms=None,
                flags=(),
                options=tuple(option.text.get(locale) for option in question.options),
                stated=_stated(question),
            ), question, right, by_option.get(-1, 0) - right, typed)))
        reports.append(QuizReport(quiz.id, quiz.title.get(locale),
                                  sum(n // size for size, n in sizes.items()), tuple(items),
                                  stale))
    return reports


def group_correlation(groups: Iterable[ItemGroup]) -> tuple[float | None, int]:
    """`correlation` of right-here and the share right on the other questions, over the
    people of `groups` who answered another question of the quiz (each group's people share
    both values); and how many people that is."""
    pairs = [(float(g.right), (g.correct - g.right) / (g.answered - 1), g.people)
             for g in groups if g.answered > 1 and g.people > 0]
    n = sum(w for *_, w in pairs)
    if n < 2:
        return None, n
    mx = math.fsum(x * w for x, _, w in pairs) / n
    my = math.fsum(y * w for _, y, w in pairs) / n
    sxx = math.fsum(w * (x - mx) ** 2 for x, _, w in pairs)
    syy = math.fsum(w * (y - my) ** 2 for _, y, w in pairs)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None, n
    sxy = math.fsum(w * (x - mx) * (y - my) for x, y, w in pairs)
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy))), n


def _stated(question: Question) -> str | None:
    return question.meta.difficulty if question.meta is not None else None


def _flagged(item: ItemStats) -> ItemStats:
    share = item.share_right
    if share is None or item.answered < MIN_ANSWERS:
        return item
    flags = []
    if share > TOO_EASY:
        flags.append(Flag.TOO_EASY)
    if share < TOO_HARD:
        flags.append(Flag.TOO_HARD)
    if item.popular_distractors:
        flags.append(Flag.DISTRACTOR)
    if (
        item.discrimination is not None
        and item.discrimination < NEGATIVE_BELOW
        and item.discriminated >= MIN_ANSWERS
    ):
        flags.append(Flag.NEGATIVE)
    return replace(item, flags=tuple(flags))


def as_seen_in_chat(
    report: QuizReport, orders: dict[tuple[str, str], tuple[int, ...]]
) -> QuizReport:
    """The report lettered as one chat saw its questions: `orders` gives each question's
    option order at its latest post there (ItemStore.shown_orders). A question shown there in
    several orders takes the latest, the one that chat saw last; its text names it anyway."""
    items = []
    for item in report.items:
        order = orders.get((report.quiz_id, item.question_id), ())
        valid = sorted(order) == list(range(len(item.option_counts)))
        items.append(replace(item, order=order if valid else ()))
    return replace(report, items=tuple(items), as_seen=True)


def correlation(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r (the point-biserial one when xs are 0 and 1); None when undefined: fewer
    than two pairs, or either side constant."""
    n = len(xs)
    if n < 2 or len(ys) != n:
        return None
    mx, my = math.fsum(xs) / n, math.fsum(ys) / n
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    syy = math.fsum((y - my) ** 2 for y in ys)
    # a constant side (allowing for rounding in the shares): no correlation is defined
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))
