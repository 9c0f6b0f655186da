"""QuizService: the one entry point every adapter calls.

Adapters translate a platform event into one of its calls and render what comes back. The
answer path is `QuizService.answer()` here and `SqliteStorage.record_answer()`; the database's
primary key on (post, person) makes the first answer final. The other calls live in small
modules by subject: posting.py (ask, close, summaries, locales), runs.py, boards.py, daily.py.
"""

from __future__ import annotations

from bot.core.boards import Boards
from bot.core.daily import DailyQuestions
from bot.core.models import AnswerResult, AnswerStatus, Person
from bot.core.posting import UnsupportedLocale
from bot.core.runs import QuizRuns
from bot.storage.base import AnswerRecord

__all__ = ["QuizService", "UnsupportedLocale"]


class QuizService(QuizRuns, Boards, DailyQuestions):
    """Construct with QuizService(catalog, storage, clock=None, rng=None) (see posting.py)."""

    async def answer(
        self, post_id: int, person: Person, shown_option: int, *, locale: str | None = None
    ) -> AnswerResult:
        """Record `person`'s answer; return only after it is committed."""
        post = await self.storage.get_post(post_id)
        question = self._question_of(post)
        if post is None or question is None:
            return AnswerResult(AnswerStatus.UNKNOWN_POST, post_id)
        locale = locale or await self.resolve_locale(person)
        if not 0 <= shown_option < len(post.order):
            return AnswerResult(AnswerStatus.INVALID_OPTION, post_id, locale=locale)

        run = await self.storage.get_run(post.run_id) if post.run_id else None
        if run is not None and run.person_key != person.key:
            return AnswerResult(AnswerStatus.NOT_YOURS, post_id, locale=locale)

        now = self.clock.now()
        if post.closed_at is not None or (post.closes_at is not None and now >= post.closes_at):
            earlier = await self.storage.answer_of(post_id, person.key)
            if earlier is None:
                return self._result(AnswerStatus.CLOSED, post, question, None, locale)
            return self._result(
                AnswerStatus.ALREADY_ANSWERED, post, question, earlier.option, locale
            )
        await self.storage.upsert_person(person.key, person.name)
        canonical = post.order[shown_option]
        outcome, earlier = await self.storage.record_answer(
            AnswerRecord(
                post_id=post.id,
                person_key=person.key,
                option=canonical,
                correct=canonical == question.answer,
                answered_at=now,
                elapsed_ms=max(0, int((now - post.created_at).total_seconds() * 1000)),
            )
        )
        if outcome == "closed":
            return self._result(AnswerStatus.CLOSED, post, question, None, locale)
        if outcome == "duplicate":
            assert earlier is not None
            return self._result(
                AnswerStatus.ALREADY_ANSWERED, post, question, earlier.option, locale
            )
        result = self._result(AnswerStatus.ACCEPTED, post, question, canonical, locale)
        if run is not None:
            return await self._advance_run(run, post, result, locale)
        return result
