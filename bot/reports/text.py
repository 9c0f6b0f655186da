"""The item-analysis report as a text table, one block per quiz (`quizbot report`).

Across chats every chat saw its own shuffle, so the columns A, B, … are the pack's letters
(the key says so), and each question's options are listed under its row by those letters
with their text, so a letter is never read alone. A select-all question stars each right
option; a number's, a text's or an order's most common answers are listed under its row (an
order's items numbered as the pack lists them, as its answers name them), as a close summary
lists a post's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.content.items import Kind
from bot.core.models import MIN_ANSWERS, Flag, ItemStats, QuizReport
from bot.core.render import letter, short
from bot.i18n import translator

EN = translator("en")  # the operator's English, plurals through the catalog

PROMPT_WIDTH = 30
OPTION_WIDTH = 24  # an option's text in the list under its question's row
ANSWER_WIDTH = 24  # a typed answer's text in the list under its question's row
NONE = "-"


@dataclass(frozen=True, slots=True)
class Scope:
    """What the report covers: one chat and one quiz, or all (None)."""

    chat_key: str | None = None
    quiz_id: str | None = None

    def __str__(self) -> str:
        chat = f"chat {self.chat_key}" if self.chat_key else "all chats"
        quiz = f"quiz {self.quiz_id}" if self.quiz_id else "all quizzes"
        return f"{chat}, {quiz}"


def percent(share: float | None) -> str:
    return NONE if share is None else f"{share:.0%}"


def seconds(ms: float | None) -> str:
    if ms is None:
        return NONE
    s = ms / 1000
    if s < 60:
        return f"{s:.1f}s"
    minutes, rest = divmod(round(s), 60)
    return f"{minutes}m{rest:02d}s"


def discrimination(value: float | None) -> str:
    return NONE if value is None else f"{value:+.2f}"


def flag_text(item: ItemStats, flag: Flag) -> str:
    if flag is Flag.DISTRACTOR:
        letters = "/".join(item.letter_of(i) for i in item.popular_distractors)
        return f"distractor {letters} beats the answer"
    return str(flag)


def _table(report: QuizReport) -> list[str]:
    options = report.max_options
    id_width = max([len("question"), *(len(i.question_id) for i in report.items)])
    header = [
        "question".ljust(id_width), "prompt".ljust(PROMPT_WIDTH), f"{'n':>5}", f"{'right':>5}",
        *(f"{letter(o):>5}" for o in range(options)), f"{'disc':>5}", f"{'median':>7}",
        "flags",
    ]
    lines = ["  ".join(header).rstrip()]
    for item in report.items:
        shares = item.option_shares
        cells = []
        for o in range(options):
            if o >= len(item.option_counts):
                cells.append("")
                continue
            mark = "*" if o in _right(item) else ""
            cells.append(f"{mark}{percent(None if shares is None else shares[o])}")
        row = [
            item.question_id.ljust(id_width),
            short(item.prompt, PROMPT_WIDTH).ljust(PROMPT_WIDTH),
            f"{item.answered:>5}",
            f"{percent(item.share_right):>5}",
            *(f"{cell:>5}" for cell in cells),
            f"{discrimination(item.discrimination):>5}",
            f"{seconds(item.median_ms):>7}",
            ", ".join(flag_text(item, f) for f in item.flags),
        ]
        lines.append("  ".join(row).rstrip())
        indent = " " * (id_width + 2)
        if item.kind is Kind.ORDER:  # no option columns: its items by the numbers its answers use
            lines.append(indent + "  ".join(f"{n}) {short(text, OPTION_WIDTH)}"
                                            for n, text in enumerate(item.options, 1)))
        elif item.options:
            lines.append(indent + "  ".join(
                f"{o.letter}{'*' if o.correct else ''}) {short(o.text, OPTION_WIDTH)}"
                for o in item.shown_options()))
        if item.typed:
            lines.append(indent + "answers: " + " · ".join(
                f"“{short(text, ANSWER_WIDTH)}” {n} ({percent(n / item.answered)})"
                + (" *" if right else "") for text, n, right in item.typed))
            listed = {text for text, _n, _right in item.typed}
            if wrong := [(text, n) for text, n in item.wrong if text not in listed]:
                lines.append(indent + "most common wrong: " + " · ".join(
                    f"“{short(text, ANSWER_WIDTH)}” {n} ({percent(n / item.answered)})"
                    for text, n in wrong))
    return lines


def _right(item: ItemStats) -> tuple[int, ...]:
    """The canonical options starred: every right one of a select-all question."""
    return item.right_options if item.kind is Kind.MULTI else (item.answer,)


def report_text(reports: Sequence[QuizReport], scope: Scope = Scope()) -> str:
    """Every quiz's table, then what the columns mean."""
    if not reports:
        return f"Item analysis ({scope}): no answers yet."
    out = [f"Item analysis ({scope}): each person's first answer to each question", ""]
    for report in reports:
        people = EN.ngettext("{n} person", "{n} people", report.people)
        answers = EN.ngettext("{n} answer", "{n} answers", report.answers)
        out.append(f"{report.title} ({report.quiz_id}): {people}, {answers}")
        out += _table(report)
        if report.stale:
            out.append(EN.ngettext(
                "({n} answer to questions or options no longer in the pack is left out)",
                "({n} answers to questions or options no longer in the pack are left out)",
                report.stale))
        out.append("")
    out += [
        "* marks the correct option; n: people who answered; right and A, B, …: their shares.",
        "A, B, …: the options in the pack's order (each chat saw its own shuffle), listed under"
        " each row.",
        "Select all: * on each right option; A, B, …: the share who picked it.",
        "answers: a number's, a text's or an order's most common (an order by its items'"
        " numbers), * if right.",
        "disc: correlation (-1 to +1) between getting the question right and the person's score",
        "on the quiz's other questions; near 0 or below, it does not tell who knows the topic.",
        "- when undefined (everyone right or wrong, too few people). median: answer time.",
        f"Flags need at least {MIN_ANSWERS} answers.",
    ]
    return "\n".join(out)
