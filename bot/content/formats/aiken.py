"""Aiken: the simplest question bank to write by hand (Moodle's "Aiken format").

    What does gradient accumulation trade for a larger effective batch?
    A. More memory per step
    B. More steps per optimizer update
    ANSWER: B

The question (one or more lines), its options lettered `A.` or `A)` in order, then
`ANSWER: X`. Blank lines between questions are optional. Aiken has no feedback, so an
imported question's explanation is its answer. Aiken carries one right answer only: a question
with several (`ANSWER: A, C`), a number, a typed answer or an order is refused with a message
pointing at GIFT or Moodle XML, which carry them (docs/content.md).
"""

from __future__ import annotations

import re

from bot.content import limits
from bot.content.formats.bank import Item, Report, text_of
from bot.content.problems import short

_OPTION = re.compile(r"([A-Z])[.)]\s+(\S.*)")
_ANSWER = re.compile(r"ANSWER\s*:\s*(.*)", re.IGNORECASE)
_SEVERAL = re.compile(r"[A-Z](?:\s*[,;/ ]\s*[A-Z])+")


def read(data: bytes, report: Report) -> list[Item]:
    text = text_of(data, report)
    if text is None:
        return []
    items: list[Item] = []
    start = 0
    prompt: list[str] = []
    options: list[str] = []
    broken = False  # a problem was reported for the question being read

    def reset() -> None:
        nonlocal prompt, options, broken
        prompt, options, broken = [], [], False

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if not prompt and not options:
            start = number
        if answer := _ANSWER.fullmatch(line):
            letter = answer.group(1).strip().upper()
            if not prompt and not options:
                report(number, "an ANSWER line without a question before it")
            elif not broken:
                index = ord(letter) - ord("A") if len(letter) == 1 and letter.isalpha() else -1
                if _SEVERAL.fullmatch(letter):
                    report(number, f"ANSWER is {short(letter)!r}: Aiken carries one right "
                           "answer; a question with several (select all that apply) can be "
                           "imported from GIFT or Moodle XML")
                elif len(options) < limits.MIN_OPTIONS:
                    report(start, f"{len(options)} option(s) (A. …, B. …); a question needs at "
                           f"least {limits.MIN_OPTIONS}")
                elif not 0 <= index < len(options):
                    last = chr(ord("A") + len(options) - 1)
                    report(number, f"ANSWER is {short(letter)!r}: give the letter of the right "
                           f"option, A to {last}")
                else:
                    items.append(Item(start, "\n".join(prompt), options, index))
            reset()
            continue
        option = _OPTION.fullmatch(line)
        if option and prompt:
            if broken:
                continue
            if len(options) == limits.MAX_OPTIONS:
                report(number, f"more than {limits.MAX_OPTIONS} options; a question has at "
                       f"most {limits.MAX_OPTIONS}")
                broken = True
                continue
            expected = chr(ord("A") + len(options))
            if option.group(1) != expected:
                report(number, f"option {option.group(1)} where {expected} was expected: "
                       "letter the options A, B, C, … in order")
                broken = True
            options.append(option.group(2).strip())
        elif options:
            if not broken:
                report(start, f"the question of line {start} has no ANSWER line")
            reset()
            start = number
            prompt.append(line)
        else:
            prompt.append(line)
    if (prompt or options) and not broken:
        report(start, f"the question of line {start} has no ANSWER line")
    return items
