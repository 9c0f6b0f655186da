"""What the organiser's dashboard shows of one chat (bot/web renders it): its overview, its
people a page at a time, a person's answers and review cards, and every answer for an export,
with the question and option texts from the catalog in the reader's language.

Every read is a page (DashboardStore's keyset reads): a chat with 100,000 people costs a
page what a chat with ten does. Boards lag the answers briefly (the materializer); they are
brought up to date before the figures are read, as /leaderboard does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from bot.content import Catalog
from bot.core import answer_text, difficulty
from bot.core.clock import Clock
from bot.core.item_stats import analyse_figures, as_seen_in_chat
from bot.core.models import Confidence, Period, QuizReport
from bot.core.ports import (
    AnswerCursor,
    AnswerRow,
    BoardStore,
    ChatStore,
    DashboardStore,
    DayCount,
    DifficultyStore,
    ItemStore,
    PeopleCursor,
    PeopleStore,
    PersonTotals,
    PostStore,
    ProblemReportRecord,
    ReportStore,
    ReviewStore,
    ScheduleStore,
    SettingsStore,
)
from bot.core.render import letter
from bot.core.schedule import Schedule
from bot.core.weak_topics import weakest

PAGE = 50  # people or answers on one page
EXPORT_PAGE = 1000  # answers read at once while an export streams
CHART_DAYS = 30
WEAKEST = 2  # topics named per person


class DashboardStorage(DashboardStore, BoardStore, ReviewStore, ReportStore, ScheduleStore,
                       SettingsStore, PeopleStore, ChatStore, ItemStore, PostStore,
                       DifficultyStore, Protocol):
    """What the dashboard reads."""


@dataclass(frozen=True, slots=True)
class Overview:
    chat_key: str
    people: int
    answered: int
    correct: int
    days: tuple[DayCount, ...]  # the last CHART_DAYS UTC days with answers
    open_reports: int
    schedule: Schedule | None
    on_streak: int = 0  # people on a daily question's day streak in the chat now
    longest_streak: int = 0  # the longest of those, in days
    best_streak: int = 0  # the longest ever in the chat
    cards: int = 0  # review cards last answered in the chat ("open": every card is)
    cards_due: int = 0  # of those, due by the end of today (UTC)

    @property
    def accuracy(self) -> float:
        return self.correct / self.answered if self.answered else 0.0


@dataclass(frozen=True, slots=True)
class PersonLine:
    person_key: str
    name: str
    answered: int
    correct: int
    last_seen: datetime | None
    day_streak: int
    weakest: tuple[str, ...]  # titles of the weak quizzes (weak_topics.py), the lowest first

    @property
    def accuracy(self) -> float:
        return self.correct / self.answered if self.answered else 0.0


@dataclass(frozen=True, slots=True)
class PeoplePage:
    lines: tuple[PersonLine, ...]
    next: PeopleCursor | None  # None: the last page


@dataclass(frozen=True, slots=True)
class AnswerLine:
    """One answer as a page or an export shows it."""

    person_key: str
    name: str
    question_id: str
    prompt: str
    chosen: str  # the option's text
    correct: bool
    answered_at: datetime  # in the chat's time zone
    seconds: float
    round_id: int | None
    letter: str = ""  # the chosen option's letter as the person saw it ("": not read)
    quiz_id: str = ""


@dataclass(frozen=True, slots=True)
class CardLine:
    question_id: str
    prompt: str
    due: datetime
    stability: float | None


@dataclass(frozen=True, slots=True)
class PersonPage:
    person_key: str
    name: str
    answers: tuple[AnswerLine, ...]
    next: AnswerCursor | None
    cards: tuple[CardLine, ...]  # the person's review cards in this chat, the soonest due first
    topics: tuple[TopicLine, ...] = ()  # each quiz they answered here, the weakest first
    last_seen: datetime | None = None  # in the chat's time zone
    day_streak: int = 0  # their current run of right daily answers here
    # how often they were right when they said sure, think so or guessing, the most sure
    # first; () where this chat never asked them how sure
    calibration: tuple[SaidLine, ...] = ()

    @property
    def answered(self) -> int:
        return sum(t.answered for t in self.topics)

    @property
    def accuracy(self) -> float:
        return sum(t.correct for t in self.topics) / self.answered if self.answered else 0.0


@dataclass(frozen=True, slots=True)
class QuestionsPage:
    """The Questions page: one quiz's item analysis at a time, and the chat's quizzes."""

    quizzes: tuple[tuple[str, str], ...]  # (id, title) of every quiz answered in the chat
    quiz_id: str | None  # the one shown
    report: QuizReport | None
    # question id -> the chance someone new answers it right, as the difficulty model
    # estimates it from every chat's first answers (difficulty.py)
    predicted: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ReportsPage:
    reports: tuple[ProblemReportRecord, ...]  # open, oldest first
    next: int | None  # the last report's id when there is a next page


@dataclass(frozen=True, slots=True)
class TopicLine:
    title: str
    answered: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.answered if self.answered else 0.0


@dataclass(frozen=True, slots=True)
class SaidLine:
    """The answers given with one confidence, as /stats' calibration counts them."""

    said: Confidence
    answered: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.answered if self.answered else 0.0


@dataclass(frozen=True, slots=True)
class RecentLine:
    prompt: str
    correct: bool
    answered_at: datetime


@dataclass(frozen=True, slots=True)
class Progress:
    """A learner's own page (the Telegram Mini App's /progress)."""

    person_key: str
    name: str
    topics: tuple[TopicLine, ...]  # every quiz they answered, the weakest first
    due: tuple[CardLine, ...]  # review cards due now, the longest overdue first
    cards: int
    recent: tuple[RecentLine, ...]  # their newest answers first


class DashboardReads:
    def __init__(self, catalog: Catalog, storage: DashboardStorage, clock: Clock) -> None:
        self.catalog = catalog
        self.storage = storage
        self.clock = clock

    async def zone(self, chat_key: str) -> ZoneInfo:
        """The chat's time zone: its daily question's, else UTC."""
        schedule = await self.storage.get_schedule(chat_key)
        return schedule.zone if schedule is not None else ZoneInfo("UTC")

    async def overview(self, chat_key: str) -> Overview:
        await self.storage.materialize()
        people, answered, correct = await self.storage.chat_totals(chat_key)
        today = self.clock.now().astimezone(UTC).date()  # one day for the chart and the cards
        days = await self.storage.chat_days(chat_key, today - timedelta(days=CHART_DAYS - 1))
        reports = await self.storage.open_report_count(chat_key)
        return Overview(chat_key, people, answered, correct, tuple(days), reports,
                        await self.storage.get_schedule(chat_key),
                        *await self.storage.chat_streaks(chat_key),
                        *await self.storage.chat_cards(chat_key, today))

    def quiz_title(self, quiz_id: str, locale: str) -> str:
        quiz = self.catalog.quizzes.get(quiz_id)
        return quiz_id if quiz is None else quiz.title.get(locale)

    async def people(
        self, chat_key: str, after: PeopleCursor | None, locale: str, limit: int = PAGE
    ) -> PeoplePage:
        await self.storage.materialize()
        rows = await self.storage.chat_people(chat_key, after, limit + 1)
        shown = rows[:limit]
        keys = [r.person_key for r in shown]
        activity = await self.storage.people_activity(chat_key, keys)
        streaks = await self.storage.chat_day_streaks(chat_key, keys)  # runs in this chat
        _people, answered, correct = await self.storage.chat_totals(chat_key)
        chat_accuracy = correct / answered if answered else 0.0
        lines = []
        for r in shown:
            last, quizzes = activity.get(r.person_key, (None, {}))
            lines.append(PersonLine(
                r.person_key, r.name, r.answered, r.correct, last,
                streaks.get(r.person_key, 0),
                tuple(self.quiz_title(q, locale)
                      for q in weakest(quizzes, chat_accuracy, WEAKEST)),
            ))
        last_row = shown[-1] if shown else None
        cursor = None if len(rows) <= limit or last_row is None else (
            last_row.correct, last_row.time_ms, last_row.person_key)
        return PeoplePage(tuple(lines), cursor)

    def line(self, row: AnswerRow, locale: str, zone: ZoneInfo,
             order: tuple[int, ...] | None = None) -> AnswerLine:
        """`order`: the post's option order (order[shown] = canonical), for the letter."""
        prompt, chosen = row.question_id, str(row.option + 1)
        shown = "" if order is None or row.option not in order else letter(order.index(row.option))
        quiz = self.catalog.quizzes.get(row.quiz_id)
        question = next((q for q in quiz.questions if q.id == row.question_id), None) \
            if quiz is not None else None
        if question is not None:
            prompt = question.prompt.get(locale)
            if 0 <= row.option < len(question.options):
                chosen = question.options[row.option].text.get(locale)
            elif row.response is not None:  # a multi's picks, a number, a text, an order
                chosen = answer_text.response_text(
                    question, order if order is not None and len(order) == len(
                        question.options) else tuple(range(len(question.options))),
                    row.response, locale) or row.response
        return AnswerLine(row.person_key, row.name, row.question_id, prompt, chosen,
                          row.correct, row.answered_at.astimezone(zone),
                          row.elapsed_ms / 1000, row.round_id, shown, row.quiz_id)

    async def person(
        self, chat_key: str, person_key: str, after: AnswerCursor | None, locale: str,
        limit: int = PAGE,
    ) -> PersonPage | None:
        """None: the person never answered in this chat (another chat's person is not
        shown here)."""
        # asked first, whatever the cursor: a page past the end (`after`) of someone who
        # never answered here must not show their name, known from another chat
        last, quizzes = (await self.storage.people_activity(chat_key, [person_key])).get(
            person_key, (None, {}))
        if last is None:
            return None
        rows = await self.storage.chat_answers(chat_key, after, limit + 1, person_key)
        zone = await self.zone(chat_key)
        shown = rows[:limit]
        cursor = None if len(rows) <= limit else (
            shown[-1].person_key, shown[-1].answered_at, shown[-1].id)
        await self.storage.materialize()
        # only this chat's cards (those last answered here, as the overview counts them): what
        # the person studies in another chat or in private is not this chat's admins' to read
        cards = tuple(CardLine(c.question_id, self.prompt(c.quiz_id, c.question_id, locale),
                               c.due.astimezone(zone), c.stability)
                      for c in await self.storage.person_cards(person_key)
                      if c.chat_key == chat_key)
        name = await self.storage.person_name(person_key) or ""
        streak = (await self.storage.chat_day_streaks(chat_key, [person_key])).get(person_key, 0)
        # each answer lettered as its post showed the options (a shuffle differs per post),
        # as the Questions page letters them as the chat saw them
        orders = {post_id: post.order for post_id in {r.post_id for r in shown}
                  if (post := await self.storage.get_post(post_id)) is not None}
        # this chat's answers only, as the cards: how sure they were elsewhere is not shown
        said = await self.storage.person_calibration(person_key, chat_key)
        calibration = tuple(SaidLine(Confidence(c), *said[c]) for c in sorted(said, reverse=True)
                            if c in Confidence._value2member_map_)
        return PersonPage(person_key, name,
                          tuple(self.line(r, locale, zone, orders.get(r.post_id)) for r in shown),
                          cursor, cards, self.topics(quizzes, locale),
                          None if last is None else last.astimezone(zone), streak, calibration)

    def topics(self, quizzes: dict[str, tuple[int, int]], locale: str) -> tuple[TopicLine, ...]:
        """(answered, right) per quiz as topics, the weakest first."""
        return tuple(sorted((TopicLine(self.quiz_title(q, locale), n, right)
                             for q, (n, right) in quizzes.items()),
                            key=lambda t: (t.accuracy, t.title)))

    async def reports(self, chat_key: str, after: int | None, limit: int = PAGE
                      ) -> ReportsPage:
        """A page of the chat's open problem reports, by keyset (the id after which it
        starts), like People."""
        rows = await self.storage.open_reports(chat_key, after, limit + 1)
        shown = tuple(rows[:limit])
        return ReportsPage(shown, shown[-1].id if len(rows) > limit else None)

    def prompt(self, quiz_id: str, question_id: str, locale: str) -> str:
        quiz = self.catalog.quizzes.get(quiz_id)
        found = next((q for q in quiz.questions if q.id == question_id), None) \
            if quiz is not None else None
        return question_id if found is None else found.prompt.get(locale)

    async def progress(self, person_key: str, locale: str, recent: int = PAGE) -> Progress:
        await self.storage.materialize()
        totals = await self.storage.person_totals(person_key)
        topics = self.topics(totals, locale)
        cards = await self.storage.person_cards(person_key)  # the soonest due first
        now = self.clock.now()
        due = tuple(CardLine(c.question_id, self.prompt(c.quiz_id, c.question_id, locale),
                             c.due, c.stability) for c in cards if c.due <= now)
        answers = await self.storage.recent_answers(person_key, recent)
        newest = tuple(RecentLine(self.prompt(a.quiz_id, a.question_id, locale), a.correct,
                                  a.answered_at) for a in answers)
        name = await self.storage.person_name(person_key) or ""
        return Progress(person_key, name, topics, due, len(cards), newest)

    async def questions(self, chat_key: str, locale: str, quiz_id: str | None = None
                        ) -> QuestionsPage | None:
        """The item analysis of one quiz answered in the chat (`quiz_id`, else the first in
        the catalog's order) from the figures the materializer keeps: a few rows per
        question, however many answers the chat has; lettered as the chat saw each question.
        None: the chat has no answers to `quiz_id`."""
        await self.storage.materialize()
        answered = set(await self.storage.item_quizzes(chat_key))
        quizzes = tuple((q.id, q.title.get(locale)) for q in self.catalog if q.id in answered)
        if quiz_id is None:
            if not quizzes:
                return QuestionsPage((), None, None)
            quiz_id = quizzes[0][0]
        elif quiz_id not in {q for q, _ in quizzes}:
            return None
        figures = await self.storage.item_figures(chat_key, quiz_id)
        reports = analyse_figures(self.catalog, figures, locale)  # this quiz's, if answered
        if not reports:
            return QuestionsPage(quizzes, quiz_id, None)
        report = reports[0]
        orders = await self.storage.shown_orders(chat_key, quiz_id)
        return QuestionsPage(quizzes, quiz_id, as_seen_in_chat(report, orders),
                             await self.predicted(quiz_id))

    async def predicted(self, quiz_id: str) -> dict[str, float]:
        """Each question of the quiz: the chance someone new answers it right (its kept
        difficulty, the pack's easy, medium or hard as the prior)."""
        quiz = self.catalog.quizzes.get(quiz_id)
        if quiz is None:
            return {}
        rated = await self.storage.question_difficulties([quiz_id])
        return {q.id: difficulty.success_for_someone_new(
                    rated.get((quiz_id, q.id)), q.meta.difficulty if q.meta else None)
                for q in quiz.questions}

    async def every_board_row(self, chat_key: str, period: Period
                              ) -> AsyncIterator[tuple[int, PersonTotals]]:
        """The chat's whole board of `period` in rank order with each rank, read EXPORT_PAGE
        people at a time by keyset (an export's rows)."""
        today = self.clock.now().astimezone(UTC).replace(hour=0, minute=0, second=0,
                                                         microsecond=0)
        since = {Period.DAY: today, Period.WEEK: today - timedelta(days=6),
                 Period.ALL: None}[period]
        await self.storage.materialize()
        # the board's own read first: it moves the week window to today when it must
        await self.storage.leaderboard(chat_key, since, 1, None)
        day = None if since is None else since.date()
        after: PeopleCursor | None = None
        rank = 0
        while True:
            rows = await self.storage.board_people(chat_key, day, after, EXPORT_PAGE)
            if rows is None:  # no one table holds it: the board's read, whole
                whole, _ = await self.storage.leaderboard(chat_key, since, 10**9, None)
                for ranked in whole:
                    yield ranked.rank, PersonTotals(ranked.person_key, ranked.name,
                                                    ranked.answered, ranked.correct,
                                                    ranked.time_ms)
                return
            for row in rows:
                rank += 1
                yield rank, row
            if len(rows) < EXPORT_PAGE:
                return
            after = (rows[-1].correct, rows[-1].time_ms, rows[-1].person_key)

    async def every_answer(self, chat_key: str, locale: str) -> AsyncIterator[AnswerLine]:
        """Every answer in the chat, read EXPORT_PAGE at a time (an export's rows)."""
        zone = await self.zone(chat_key)
        after: AnswerCursor | None = None
        while True:
            rows = await self.storage.chat_answers(chat_key, after, EXPORT_PAGE)
            for row in rows:
                yield self.line(row, locale, zone)
            if len(rows) < EXPORT_PAGE:  # the last page
                return
            after = (rows[-1].person_key, rows[-1].answered_at, rows[-1].id)
