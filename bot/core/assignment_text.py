"""What assignments say (core/assignments.py), the same on every platform: the announcement,
the chat's list, a member's reminder and the deadline's summary. Deadlines are shown in the
zone they were given in, as YYYY-MM-DD HH:MM, which reads the same in every language."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.core.ports import AssignmentProgress, AssignmentRecord
from bot.i18n import Translator

MOST_NAMES = 20  # finishers named in the summary; the rest are counted


def when(deadline: datetime, tz: str) -> str:
    return f"{deadline.astimezone(ZoneInfo(tz)):%Y-%m-%d %H:%M} ({tz})"


def announcement(record: AssignmentRecord, title: str, t: Translator) -> str:
    # i18n: posted in the group when an admin assigns a quiz; {title} is the quiz's title,
    # {when} a date and time with its zone, e.g. 2026-12-24 18:00 (Asia/Kolkata)
    return "\n".join([
        t.gettext("📝 Assignment #{id}: “{title}”, {total} questions, to finish by {when}.",
                  id=record.id, title=title, total=t.number(record.new.total),
                  when=when(record.new.deadline, record.new.tz)),
        t.gettext("Take it privately, at your own pace, with the button below."),
    ])


def listing(records: Sequence[tuple[AssignmentRecord, str]], t: Translator,
            cancel: str) -> str:
    """`records`: each with its title; `cancel`: how to cancel one on this platform."""
    if not records:
        return t.gettext("This chat has no assignments running.")
    lines = [t.gettext("Assignments running here:")]
    lines += [t.gettext("#{id} “{title}”: by {when}", id=r.id, title=title,
                        when=when(r.new.deadline, r.new.tz)) for r, title in records]
    lines.append(cancel)
    return "\n".join(lines)


def cancelled(record: AssignmentRecord, title: str, t: Translator) -> str:
    return t.gettext("Assignment #{id} (“{title}”) is cancelled.", id=record.id, title=title)


def started(number: int, quizzes: int, title: str, t: Translator) -> str:
    """Said before a topic's quiz when the assignment has several."""
    return t.gettext("Assignment “{title}”: quiz {number} of {quizzes}.", title=title,
                     number=t.number(number), quizzes=t.number(quizzes))


def reminder(title: str, answered: int, total: int, deadline: datetime, tz: str,
             t: Translator) -> str:
    # i18n: a private message before an assignment's deadline
    return t.gettext("⏰ “{title}” is due by {when}: you have answered {answered} of its {total} "
                     "questions. Press the assignment's button in the group to go on.",
                     title=title, when=when(deadline, tz), answered=t.number(answered),
                     total=t.number(total))


def summary(title: str, total: int, people: Sequence[AssignmentProgress],
            hardest: tuple[str, float] | None, t: Translator) -> str:
    """The deadline's summary in the chat."""
    finished = [p for p in people if p.answered >= total]
    lines = [t.gettext("⏰ The assignment “{title}” is over: {finished} of {started} who "
                       "started it finished.", title=title, finished=t.number(len(finished)),
                       started=t.number(len(people)))]
    if finished:
        shown = ", ".join(p.name or "?" for p in finished[:MOST_NAMES])
        more = len(finished) - MOST_NAMES
        lines.append(t.gettext("Finished: {names}", names=shown) if more <= 0 else
                     t.gettext("Finished: {names} and {more} more", names=shown,
                               more=t.number(more)))
        share = sum(p.right for p in finished) / (len(finished) * total)
        lines.append(t.gettext("Average of those who finished: {share} right",
                               share=t.percent(share)))
    else:
        lines.append(t.gettext("Nobody finished it."))
    if hardest is not None:
        prompt, share = hardest
        lines.append(t.gettext("Hardest question: “{prompt}” ({share} right)", prompt=prompt,
                               share=t.percent(share)))
    return "\n".join(lines)
