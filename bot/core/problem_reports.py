"""Problem reports: a person says what is wrong with a question ("⚑" next to a question's
answer and explanation, or /report), an admin lists and resolves them (`quizbot content
reports`).

The question must be in the catalog (a flag's data is never trusted: a forged or stale id is
refused and nothing is stored). One person has at most one open report per question: a
second report of it, while the first is open, is appended to the first. A person makes at
most DAILY_REPORTS new reports in 24 hours. The adapter thanks the person only once this
returns, so after the commit.
"""

from __future__ import annotations

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
    nothing_to_report,
    report_too_long,
    too_many_reports,
)
from bot.core.models import Chat, Person
from bot.core.ports import NewProblemReport, PeopleStore, ProblemReportRecord, ReportStore
from bot.i18n import Translator


class ReportsStorage(ReportStore, PeopleStore, Protocol):
    """What ProblemReports reads and writes."""


REPORT_WINDOW = timedelta(hours=24)
MAX_STORED_CHARS = 4 * MAX_REPORT_CHARS  # an open report with later ones appended


@dataclass(frozen=True, slots=True)
class ReportReceipt:
    """A stored report: the record, and whether it was appended to an open one."""

    report: ProblemReportRecord
    appended: bool


def clean_text(text: str) -> str:
    """The report as stored: stripped, 1..MAX_REPORT_CHARS characters."""
    text = text.strip()
    if not text:
        raise empty_report()
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

    def title(self, question_id: str, locale: str) -> str:
        """The question's prompt in `locale` (for a thank-you or a ForceReply prompt)."""
        quiz_id, qid = self.question(question_id)
        return self.catalog.question(quiz_id, qid).prompt.get(locale)

    async def report(
        self, person: Person, chat: Chat, question_id: str, text: str
    ) -> ReportReceipt:
        quiz_id, qid = self.question(question_id)
        cleaned = clean_text(text)
        now = self.clock.now()
        await self.storage.upsert_person(person.key, person.name)
        outcome, record = await self.storage.add_problem_report(
            NewProblemReport(quiz_id, qid, person.key, person.name, chat.key, cleaned, now),
            since=now - REPORT_WINDOW, daily_cap=self.daily_cap, max_chars=MAX_STORED_CHARS,
        )
        if outcome == "capped" or record is None:
            raise too_many_reports(self.daily_cap)
        return ReportReceipt(record, appended=outcome == "appended")

    async def report_last(self, person: Person, chat: Chat, text: str) -> ReportReceipt:
        """/report <text>: about the last question the person answered in this chat."""
        clean_text(text)  # an empty report says how to use /report first
        last = await self.storage.last_answered(person.key, chat.key)
        if last is None:
            raise nothing_to_report()
        return await self.report(person, chat, last[1], text)

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


# what the person reads ----------------------------------------------------------------------
def report_prompt_text(title: str, t: Translator) -> str:
    """Under a first line "⚑ <question id>" that the adapter adds (Telegram's prompt)."""
    return t.gettext("What is wrong with this question?\n“{question}”\nReply to this message "
                     "with a few words.", question=title)


def report_thanks_text(receipt: ReportReceipt, title: str, t: Translator) -> str:
    if receipt.appended:
        return t.gettext("Thank you: added to your report on “{question}”.", question=title)
    return t.gettext("Thank you: your report on “{question}” is stored, and an admin will "
                     "look at it.", question=title)
