"""The tables the dashboard's exports hold, in the reader's language: every answer of the
chat with its quiz and topic, then (in XLSX, a sheet each) the questions and the people
computed from them or read beside them, and the board of a period.

The Questions table is summed from the answers as they stream by (a few figures per question
of the catalog, never the answers themselves); the People table is the People page's read,
a page of EXPORT_PAGE people at a time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from zoneinfo import ZoneInfo

from bot.core.dashboard_reads import EXPORT_PAGE, AnswerLine, DashboardReads
from bot.core.models import Period
from bot.core.ports import PeopleCursor
from bot.i18n import Translator, _
from bot.web.exports import Cell, Column, Kind, Table


def headed(name: str, columns: Sequence[Column], rows: AsyncIterator[Sequence[Cell]],
           t: Translator, zone: ZoneInfo | None) -> Table:
    """The table with its name and headers (msgids) in the reader's language; a time's header
    names its zone, since a spreadsheet's times have none."""
    def header(c: Column) -> str:
        text = t.gettext(c.header)
        return f"{text} ({zone.key})" if c.kind is Kind.TIME and zone is not None else text

    return Table(t.gettext(name), [replace(c, header=header(c)) for c in columns], rows)


@dataclass
class _Tally:
    prompt: str
    answered: int = 0
    right: int = 0
    seconds: float = 0.0


class AnswerTables:
    """The answers workbook of one chat: Answers, then Questions (from the answers read),
    then People."""

    def __init__(self, reads: DashboardReads, chat_key: str, locale: str, t: Translator,
                 zone: ZoneInfo) -> None:
        self.reads, self.chat_key, self.locale, self.t = reads, chat_key, locale, t
        self.zone = zone
        self.tallies: dict[tuple[str, str], _Tally] = {}

    def topic(self, quiz_id: str) -> str:
        return self.reads.quiz_title(quiz_id, self.locale)

    def answers(self) -> Table:
        columns = [Column(_("Person"), width=14), Column(_("Name"), width=18),
                   Column(_("Quiz"), width=22), Column(_("Topic"), width=30),
                   Column(_("Question id"), width=16), Column(_("Prompt"), width=50),
                   Column(_("Option chosen"), width=30), Column(_("Correct"), Kind.YES_NO, 9),
                   Column(_("Answered at"), Kind.TIME, 20),
                   Column(_("Seconds taken"), Kind.NUMBER, 9), Column(_("Round"), Kind.COUNT, 8)]
        return headed(_("Answers"), columns, self._answer_rows(), self.t, self.zone)

    async def _answer_rows(self) -> AsyncIterator[Sequence[Cell]]:
        async for a in self.reads.every_answer(self.chat_key, self.locale):
            self._count(a)
            yield (a.person_key, a.name, a.quiz_id, self.topic(a.quiz_id), a.question_id,
                   a.prompt, a.chosen, a.correct, a.answered_at, round(a.seconds, 3),
                   a.round_id)

    def _count(self, a: AnswerLine) -> None:
        tally = self.tallies.setdefault((a.quiz_id, a.question_id), _Tally(a.prompt))
        tally.answered += 1
        tally.right += a.correct
        tally.seconds += a.seconds

    def questions(self) -> Table:
        columns = [Column(_("Quiz"), width=22), Column(_("Topic"), width=30),
                   Column(_("Question id"), width=16), Column(_("Prompt"), width=50),
                   Column(_("Answers"), Kind.COUNT, 9), Column(_("Right"), Kind.COUNT, 9),
                   Column(_("Accuracy"), Kind.SHARE, 9),
                   Column(_("Mean seconds taken"), Kind.NUMBER, 12)]
        return headed(_("Questions"), columns, self._question_rows(), self.t, self.zone)

    def _place(self, key: tuple[str, str]) -> tuple[str, int, str]:
        """The catalog's order within a quiz, the quizzes by topic."""
        quiz_id, question_id = key
        quiz = self.reads.catalog.quizzes.get(quiz_id)
        ids = [] if quiz is None else [q.id for q in quiz.questions]
        return (self.topic(quiz_id), ids.index(question_id) if question_id in ids
                else len(ids), question_id)

    async def _question_rows(self) -> AsyncIterator[Sequence[Cell]]:
        for key in sorted(self.tallies, key=self._place):
            tally = self.tallies[key]
            yield (key[0], self.topic(key[0]), key[1], tally.prompt, tally.answered,
                   tally.right, tally.right / tally.answered,
                   round(tally.seconds / tally.answered, 3))

    def people(self) -> Table:
        columns = [Column(_("Person"), width=14), Column(_("Name"), width=18),
                   Column(_("Answers"), Kind.COUNT, 9), Column(_("Right"), Kind.COUNT, 9),
                   Column(_("Accuracy"), Kind.SHARE, 9),
                   Column(_("Last seen"), Kind.TIME, 20),
                   Column(_("Day streak"), Kind.COUNT, 10),
                   Column(_("Weakest topics"), width=40)]
        return headed(_("People"), columns, self._people_rows(), self.t, self.zone)

    async def _people_rows(self) -> AsyncIterator[Sequence[Cell]]:
        after: PeopleCursor | None = None
        while True:
            page = await self.reads.people(self.chat_key, after, self.locale, EXPORT_PAGE)
            for p in page.lines:
                yield (p.person_key, p.name, p.answered, p.correct, p.accuracy,
                       None if p.last_seen is None else p.last_seen.astimezone(self.zone),
                       p.day_streak, ", ".join(p.weakest))
            if page.next is None:
                return
            after = page.next


async def answer_tables(reads: DashboardReads, chat_key: str, locale: str, t: Translator
                        ) -> list[Table]:
    """Answers, Questions and People, to be read in that order (a CSV takes the first)."""
    tables = AnswerTables(reads, chat_key, locale, t, await reads.zone(chat_key))
    return [tables.answers(), tables.questions(), tables.people()]


def board_table(reads: DashboardReads, chat_key: str, period: Period, t: Translator
                ) -> Table:
    async def rows() -> AsyncIterator[Sequence[Cell]]:
        async for rank, r in reads.every_board_row(chat_key, period):
            yield (rank, r.person_key, r.name, r.correct, r.answered, r.time_ms / 1000)

    columns = [Column(_("Rank"), Kind.COUNT, 7), Column(_("Person"), width=14),
               Column(_("Name"), width=18), Column(_("Right"), Kind.COUNT, 9),
               Column(_("Answers"), Kind.COUNT, 9), Column(_("Seconds"), Kind.NUMBER, 10)]
    return headed(_("Board"), columns, rows(), t, None)
