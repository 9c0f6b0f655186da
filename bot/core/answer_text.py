"""What an answer of each kind reads as, in a person's language: the right answer
(`correct_text`) and the person's own (`response_text`), from the question, the post's option
order (`order[shown] = canonical`) and the answer as stored (its canonical option, or the
canonical response of the other kinds, bot/core/grading.py).

Options are named by the letter the person saw. A choice's texts are the option's text as
before (the letter is added where it is shown); the other kinds carry their letters:
"A) …, C) …" for several right answers, "B → D → A → C" for an order, "2.87 GB (±0.1)" for
a number with its tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from bot.content.items import Kind, Question
from bot.core import grading
from bot.i18n import translator

LETTERS = grading.LETTERS
ARROW = " → "
RIGHT, WRONG = "✓", "✗"


def right_shown(question: Question, order: Sequence[int]) -> tuple[int, ...]:
    """ShownQuestion.correct_set: a multi's right options and an order's right sequence, as
    shown indexes; () for the other kinds."""
    if question.kind is Kind.MULTI:
        return tuple(sorted(order.index(c) for c in question.answers if c in order))
    if question.kind is Kind.ORDER:
        return tuple(order.index(c) for c in range(len(order)))
    return ()


def one_right(question: Question, order: Sequence[int]) -> int:
    """ShownQuestion.correct: the one right option as shown; -1 for a kind that has not one."""
    if question.kind in (Kind.CHOICE, Kind.TRUEFALSE) and question.answer in order:
        return list(order).index(question.answer)
    return -1


def number(value: float, locale: str) -> str:
    """A number in the reader's grouping (1,00,000 in bn and hi), its decimals kept."""
    if (value and abs(value) < 0.001) or abs(value) >= 1e15:
        return grading.number_text(value)  # too small or large for a grouped decimal
    return translator(locale).number(value)


def with_unit(text: str, question: Question, locale: str) -> str:
    unit = question.numeric.unit if question.numeric is not None else None
    return f"{text} {unit.get(locale)}" if unit is not None else text


def _option(question: Question, order: Sequence[int], canonical: int, locale: str) -> str:
    shown = list(order).index(canonical) if canonical in order else -1
    text = question.options[canonical].text.get(locale)
    return f"{LETTERS[shown]}) {text}" if 0 <= shown < len(LETTERS) else text


def correct_text(question: Question, order: Sequence[int], locale: str) -> str:
    """The right answer: an option's text (choice, true/false); every right option with its
    letter (multi); the items in order with their letters (order); the number with its
    tolerance or range and unit (numeric); the first accepted form in `locale` (text)."""
    kind = question.kind
    if kind is Kind.MULTI:
        return ", ".join(_option(question, order, c, locale)
                         for c in sorted(question.answers, key=_shown_key(order)))
    if kind is Kind.ORDER:
        return ARROW.join(_option(question, order, c, locale) for c in range(len(order)))
    if kind is Kind.NUMERIC and question.numeric is not None:
        key = question.numeric
        low, high, value = key.low, key.high, key.value
        if high > low and math.isclose(value - low, high - value, rel_tol=1e-9, abs_tol=1e-12):
            bound = f"±{number(high - value, locale)}"  # symmetric: a tolerance
        elif high > low:
            bound = f"{number(low, locale)}–{number(high, locale)}"
        else:
            return with_unit(number(value, locale), question, locale)
        return f"{with_unit(number(value, locale), question, locale)} ({bound})"
    if kind is Kind.TEXT and question.accept is not None:
        forms = question.accept.forms(locale)
        return forms[0] if forms else ""
    if 0 <= question.answer < len(question.options):
        return question.options[question.answer].text.get(locale)
    return ""


def _shown_key(order: Sequence[int]) -> Callable[[int], int]:
    """Canonical options sorted as they were shown."""
    listed = list(order)
    return lambda c: listed.index(c) if c in listed else len(listed)


def chosen_text(question: Question, option: int | None, locale: str) -> str:
    """The option picked, for the kinds answered with one (choice, true/false)."""
    if option is None or not 0 <= option < len(question.options):
        return ""
    return question.options[option].text.get(locale)


def response_text(
    question: Question, order: Sequence[int], response: str | None, locale: str
) -> str:
    """The person's answer of a kind not answered with one option, as shown back to them:
    a multi's picks by letter, each marked right or wrong ("A ✓, C ✓, D ✗"); an order's
    letters ("B → A → D → C"); the number with the unit ("2.9 GB"); the text. "" for a
    choice, or when the stored response cannot be read."""
    kind = question.kind
    if kind is Kind.MULTI:
        picks = [c for c in grading.stored_options(response) if c in order]
        listed = list(order)
        return ", ".join(
            f"{LETTERS[listed.index(c)]} {RIGHT if c in question.answers else WRONG}"
            for c in sorted(picks, key=listed.index) if listed.index(c) < len(LETTERS))
    if kind is Kind.ORDER:
        listed = list(order)
        return ARROW.join(LETTERS[listed.index(c)] for c in grading.stored_options(response)
                          if c in listed and listed.index(c) < len(LETTERS))
    if kind is Kind.NUMERIC:
        value = grading.stored_number(response)
        return "" if value is None else with_unit(number(value, locale), question, locale)
    if kind is Kind.TEXT:
        return response or ""
    return ""


def partial(question: Question, response: str | None) -> tuple[int, int] | None:
    """A multi's (right picks, right options), from its stored response."""
    if question.kind is not Kind.MULTI:
        return None
    picks = set(grading.stored_options(response))
    return len(picks & set(question.answers)), len(question.answers)
