"""Problem reports: a person says what is wrong with a question ("⚑" next to a question's
answer and explanation, or /report), a chat's admins list and resolve the reports made there
(/reports), the operator all of them (`quizbot content reports`).

The question must be in the catalog (a flag's data is never trusted: a forged or stale id is
refused and nothing is stored). A typed id that is no question is refused with the nearest
ids, or the last question the person answered there, never filed against another question.
One person has at most one open report per question: a second report of it, while the first
is open, is appended to the first. A person makes at most DAILY_REPORTS new reports in 24
hours. The adapter thanks the person only once this returns, so after the commit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from bot.content import Catalog
from bot.core.clock import Clock
from bot.core.errors import (
    DAILY_REPORTS,
    MAX_REPORT_CHARS,
    AlreadyResolved,
    UnknownQuestion,
    UnknownReport,
    empty_report,
    may_not_see_reports,
    nothing_to_report,
    report_too_long,
    too_many_reports,
)
from bot.core.models import Chat, Person
from bot.core.ports import NewProblemReport, PeopleStore, ProblemReportRecord, ReportStore
from bot.core.render import person_name
from bot.i18n import Translator, _


class ReportsStorage(ReportStore, PeopleStore, Protocol):
    """What ProblemReports reads and writes."""


REPORT_WINDOW = timedelta(hours=24)
TITLE_CHARS, TEXT_CHARS = 60, 300  # per report in /reports (a reply holds 4096 characters)
MAX_STORED_CHARS = 4 * MAX_REPORT_CHARS  # an open report with later ones appended
# how /report is typed where a command is one line of words (Telegram, the console)
REPORT_USAGE = _("/report <question id> <what is wrong>")
# a word shaped like a question id ("zs-offload"): meant as one, so never taken as the text
ID_SHAPED = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
NEAREST = 3


@dataclass(frozen=True, slots=True)
class ReportReceipt:
    """A stored report: the record, and whether it was appended to an open one."""

    report: ProblemReportRecord
    appended: bool


def clean_text(text: str, usage: str = REPORT_USAGE) -> str:
    """The report as stored: stripped, 1..MAX_REPORT_CHARS characters."""
    text = text.strip()
    if not text:
        raise empty_report(usage)
    if len(text) > MAX_REPORT_CHARS:
        raise report_too_long(len(text))
    return text


class ProblemReports:
    def __init__(self, catalog: Catalog, storage: ReportsStorage, clock: Clock, *,
                 daily_cap: int = DAILY_REPORTS) -> None:
        self.catalog = catalog
        self.storage = storage
        self.clock = clock
        self.daily_cap = daily_cap

    def question(self, question_id: str) -> tuple[str, str]:
        """(quiz id, question id) of a question id from a flag or a command; question ids
        are unique across the catalog. UnknownQuestion otherwise."""
        wanted = question_id.strip().lower()
        for quiz in self.catalog:
            for question in quiz.questions:
                if question.id == wanted:
                    return quiz.id, question.id
        raise UnknownQuestion(question_id)

    def is_question(self, word: str) -> bool:
        try:
            self.question(word)
        except UnknownQuestion:
            return False
        return True

    def titles(self, reports: Sequence[ProblemReportRecord], locale: str) -> dict[str, str]:
        """Each reported question's prompt in `locale` (one no longer in the catalog: none)."""
        found = {}
        for r in reports:
            try:
                found[r.question_id] = self.title(r.question_id, locale)
            except UnknownQuestion:
                continue
        return found

    def title(self, question_id: str, locale: str) -> str:
        """The question's prompt in `locale` (for a thank-you or a ForceReply prompt)."""
        quiz_id, qid = self.question(question_id)
        return self.catalog.question(quiz_id, qid).prompt.get(locale)

    def place(self, question_id: str, locale: str) -> tuple[str, int, int]:
        """The question's quiz title in `locale`, its number in the quiz and the quiz's size:
        how a person knows it (its id is the catalog's)."""
        quiz_id, qid = self.question(question_id)
        quiz = self.catalog.quizzes[quiz_id]
        ids = [q.id for q in quiz.questions]
        return quiz.title.get(locale), ids.index(qid) + 1, len(ids)

    def nearest(self, word: str) -> list[str]:
        """The question ids closest to `word` (a typo), best first."""
        ids = [q.id for quiz in self.catalog for q in quiz.questions]
        import difflib  # only for an id that is not found

        return difflib.get_close_matches(word.strip().lower(), ids, n=NEAREST, cutoff=0.6)

    async def refuse_unknown(self, person: Person, chat: Chat, question_id: str) -> None:
        """UnknownQuestion for an id typed by a person, with what they may have meant."""
        nearest = self.nearest(question_id)
        last = None if nearest else await self.storage.last_answered(person.key, chat.key)
        raise UnknownQuestion(question_id, nearest, last[1] if last else None)

    async def report(
        self, person: Person, chat: Chat, question_id: str, text: str, *,
        usage: str = REPORT_USAGE, typed: bool = False,
    ) -> ReportReceipt:
        """`typed`: the id was typed by the person (a refusal suggests ids), not a flag's."""
        if typed and not self.is_question(question_id):
            await self.refuse_unknown(person, chat, question_id)
        quiz_id, qid = self.question(question_id)
        cleaned = clean_text(text, usage)
        now = self.clock.now()
        await self.storage.upsert_person(person.key, person.known_name)
        outcome, record = await self.storage.add_problem_report(
            NewProblemReport(quiz_id, qid, person.key, person.known_name, chat.key, cleaned, now),
            since=now - REPORT_WINDOW, daily_cap=self.daily_cap, max_chars=MAX_STORED_CHARS,
        )
        if outcome == "capped" or record is None:
            raise too_many_reports(self.daily_cap)
        return ReportReceipt(record, appended=outcome == "appended")

    async def report_last(
        self, person: Person, chat: Chat, text: str, *, usage: str = REPORT_USAGE
    ) -> ReportReceipt:
        """/report <text>: about the last question the person answered in this chat."""
        clean_text(text, usage)  # an empty report says how to use /report first
        last = await self.storage.last_answered(person.key, chat.key)
        if last is None:
            raise nothing_to_report(usage)
        return await self.report(person, chat, last[1], text, usage=usage)

    async def report_words(self, person: Person, chat: Chat, words: str) -> ReportReceipt:
        """/report as one line of words: "<question id> <text>" when the first word is a
        question id, refused when it is shaped like one but is none, else "<text>" about the
        last question answered in this chat. Lines after the first word are kept."""
        parts = words.strip().split(None, 1)
        first = parts[0] if parts else ""
        if self.is_question(first):
            return await self.report(person, chat, first, parts[1] if parts[1:] else "")
        if ID_SHAPED.fullmatch(first):
            await self.refuse_unknown(person, chat, first)
        return await self.report_last(person, chat, words)

    async def list(
        self, *, open_only: bool = True, quiz_id: str | None = None
    ) -> list[ProblemReportRecord]:
        return await self.storage.problem_reports(open_only=open_only, quiz_id=quiz_id)

    async def resolve(self, report_id: int, note: str | None = None) -> None:
        note = (note or "").strip() or None
        outcome = await self.storage.resolve_problem_report(report_id, self.clock.now(), note)
        if outcome == "unknown":
            raise UnknownReport(report_id)
        if outcome == "already":
            raise AlreadyResolved(report_id)

    async def for_chat(
        self, chat: Chat, *, allowed: bool
    ) -> Sequence[ProblemReportRecord]:
        """/reports: the open reports made in this chat, for its admins (`allowed`: the
        platform's word), oldest first."""
        if not allowed:
            raise may_not_see_reports()
        return await self.storage.problem_reports(chat_key=chat.key)

    async def resolve_in_chat(
        self, chat: Chat, report_id: int | str, note: str | None = None, *, allowed: bool
    ) -> int:
        """/reports resolve <id> [note]: only a report made in this chat (another chat's is
        unknown here). Returns the id resolved."""
        if not allowed:
            raise may_not_see_reports()
        text = str(report_id).strip().lstrip("#")
        if not text.isdigit():
            raise UnknownReport(str(report_id)[:20])
        number = int(text)
        mine = await self.storage.problem_reports(open_only=False, chat_key=chat.key)
        if not any(r.id == number for r in mine):
            raise UnknownReport(number)
        await self.resolve(number, note)
        return number


# what the person reads ----------------------------------------------------------------------
def report_prompt_text(title: str, t: Translator) -> str:
    """Under a first line "⚑ <question id>" that the adapter adds (Telegram's prompt)."""
    return t.gettext("What is wrong with this question?\n“{question}”\nReply to this message "
                     "with a few words.", question=title)


def report_heading_text(place: tuple[str, int, int], t: Translator) -> str:
    """Which question a report prompt is about: "Mixed precision · question 3 of 10"."""
    title, number, total = place
    return t.gettext("{title} · question {number} of {total}", title=title,
                     number=t.number(number), total=t.number(total))


def report_thanks_text(receipt: ReportReceipt, title: str, t: Translator) -> str:
    if receipt.appended:
        return t.gettext("Thank you: added to your report on “{question}”.", question=title)
    return t.gettext("Thank you: your report on “{question}” is stored, and an admin will "
                     "look at it.", question=title)


def report_list_text(
    reports: Sequence[ProblemReportRecord], t: Translator, titles: Mapping[str, str],
    resolve_hint: str,
) -> str:
    """/reports: each open report with its id, question, person and text; `titles`: question
    id -> prompt in the reader's language; `resolve_hint`: how to resolve one there."""
    if not reports:
        return t.gettext("No open reports in this chat.")
    lines = [t.ngettext("{n} open report in this chat:", "{n} open reports in this chat:",
                        len(reports))]
    for n, r in enumerate(reports, 1):
        title = titles.get(r.question_id, r.question_id)
        lines.append(t.gettext("#{id} · {question} ({question_id}) · {name}: {text}",
                               id=r.id, question=clip(title, TITLE_CHARS),
                               question_id=r.question_id, name=person_name(r.person_name, n, t),
                               text=clip(r.text, TEXT_CHARS)))
    lines.append("")
    lines.append(t.gettext(resolve_hint))
    return "\n".join(lines)


def resolved_text(report_id: int, t: Translator) -> str:
    return t.gettext("Report #{id} is resolved.", id=report_id)


def clip(text: str, most: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1] + "…"
