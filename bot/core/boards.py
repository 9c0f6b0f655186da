"""Leaderboards, personal stats and the review of missed questions."""

from __future__ import annotations

from datetime import UTC, timedelta
from typing import Protocol

from bot.content import Catalog
from bot.content.items import DEFAULT_LOCALE
from bot.core.clock import Clock
from bot.core.models import (
    BoardRow,
    Confidence,
    Leaderboard,
    MissedQuestion,
    Period,
    Person,
    PersonStats,
    QuizStats,
)
from bot.core.ports import AnswerStore, BoardStore, PeopleStore
from bot.core.questions import missed
from bot.core.schedule import day_streaks


class BoardsStorage(BoardStore, AnswerStore, PeopleStore, Protocol):
    """What Boards reads."""


class Boards:
    def __init__(self, catalog: Catalog, storage: BoardsStorage, clock: Clock) -> None:
        self.catalog = catalog
        self.storage = storage
        self.clock = clock

    async def leaderboard(
        self,
        chat_key: str | None,
        period: Period | str = Period.ALL,
        *,
        person_key: str | None = None,
        limit: int = 10,
    ) -> Leaderboard:
        period = Period(period)
        today = self.clock.now().astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        since = {Period.DAY: today, Period.WEEK: today - timedelta(days=6), Period.ALL: None}
        await self.storage.materialize()  # every acknowledged answer counts, ours included
        rows, me = await self.storage.leaderboard(chat_key, since[period], limit, person_key)
        shown = [*rows, *([me] if me is not None and me not in rows else [])]
        days = await self.storage.daily_days_for([r.person_key for r in shown])  # one read
        streaks = {key: day_streaks(*days[key])[0] for key in days}
        board = [
            BoardRow(r.rank, r.person_key, r.name, r.correct, r.answered, r.time_ms,
                     streaks[r.person_key])
            for r in shown
        ]
        mine = next((row for row in board if me is not None and row.person_key == me.person_key),
                    None)
        return Leaderboard(chat_key, period, tuple(board[: len(rows)]), mine)

    async def day_streak(self, person_key: str) -> int:
        """The current run of days with a correct daily answer."""
        days, latest = await self.storage.daily_days(person_key)
        return day_streaks(days, latest)[0]

    async def stats(self, person: Person, locale: str = DEFAULT_LOCALE) -> PersonStats:
        totals = await self.storage.person_totals(person.key)
        await self.storage.materialize()
        current, best = await self.storage.person_streaks(person.key)
        days, latest = await self.storage.daily_days(person.key)
        day_current, day_best = day_streaks(days, latest)
        said = await self.storage.person_calibration(person.key)
        calibration = tuple((Confidence(c), *said[c]) for c in sorted(said, reverse=True)
                            if c in Confidence._value2member_map_)
        per_quiz = tuple(
            QuizStats(
                quiz_id,
                # a withdrawn quiz (/unpublish) keeps its title here
                q.title.get(locale) if (q := self.catalog.quizzes.get(quiz_id)) else quiz_id,
                answered,
                correct,
            )
            for quiz_id, (answered, correct) in sorted(totals.items())
        )
        return PersonStats(
            person_key=person.key,
            name=await self.storage.person_name(person.key) or person.name,
            answered=sum(a for a, _ in totals.values()),
            correct=sum(c for _, c in totals.values()),
            current_streak=current,
            best_streak=best,
            per_quiz=per_quiz,
            day_streak=day_current,
            best_day_streak=day_best,
            calibration=calibration,
        )

    async def missed(
        self, person: Person, locale: str = DEFAULT_LOCALE, limit: int = 10
    ) -> list[MissedQuestion]:
        """Questions whose latest answer by this person was wrong, for a second look, with
        what they answered."""
        wrong = []
        for answer, quiz_id, question_id, order in await self.storage.missed_answers(
                person.key, limit):
            quiz = self.catalog.get(quiz_id)
            if quiz is None:
                continue
            try:
                question = quiz.question(question_id)
            except KeyError:
                continue
            same = len(order) == len(question.options)  # else its options changed since
            wrong.append(missed(quiz, question, answer if same else None, locale,
                                order if same else None))
        return wrong[:limit]
