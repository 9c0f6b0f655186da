"""The hot path: a person picks an option; it is stored once and final, then shown.

An adapter turns a poll answer or a button click into `Answers.answer(post, person, option)`;
storage (`record_answer`) inserts it, the database's primary key on (post, person) making the
first answer final. Nothing is acknowledged to the platform before this returns.
"""

from __future__ import annotations

from bot.core.clock import Clock
from bot.core.locales import Locales
from bot.core.models import AnswerResult, AnswerStatus, Chat, Person
from bot.core.ports import AnswerRecord, Storage
from bot.core.questions import Questions, is_open
from bot.core.runs import Runs


class Answers:
    def __init__(
        self, questions: Questions, runs: Runs, locales: Locales, storage: Storage, clock: Clock
    ) -> None:
        self.questions = questions
        self.runs = runs
        self.locales = locales
        self.storage = storage
        self.clock = clock

    async def answer(
        self, post_id: int, person: Person, shown_option: int, *, locale: str | None = None
    ) -> AnswerResult:
        """Record `person`'s answer; return only after it is committed."""
        post = await self.storage.get_post(post_id)
        question = self.questions.question_of(post)
        if post is None or question is None:
            return AnswerResult(AnswerStatus.UNKNOWN_POST, post_id)
        locale = locale or await self.locales.for_person(person, Chat(post.chat_key))
        if not 0 <= shown_option < len(post.order):
            return AnswerResult(AnswerStatus.INVALID_OPTION, post_id, locale=locale)
        if post.owner_key is not None and post.owner_key != person.key:
            # someone else's private question or quiz run (a forwarded poll, a shared DM)
            return AnswerResult(AnswerStatus.NOT_YOURS, post_id, locale=locale)

        now = self.clock.now()
        if not is_open(post, now):
            earlier = await self.storage.answer_of(post_id, person.key)
            if earlier is None:
                return self.questions.result(AnswerStatus.CLOSED, post, question, None, locale)
            return self.questions.result(
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
            return self.questions.result(AnswerStatus.CLOSED, post, question, None, locale)
        if outcome == "duplicate":
            assert earlier is not None
            return self.questions.result(
                AnswerStatus.ALREADY_ANSWERED, post, question, earlier.option, locale
            )
        result = self.questions.result(AnswerStatus.ACCEPTED, post, question, canonical, locale)
        if post.run_id is not None:
            run = await self.storage.get_run(post.run_id)
            if run is not None:
                return await self.runs.advance(run, post, result, locale)
        elif post.owner_key is not None:
            # one person's single question is done once answered: the reply is its summary
            await self.questions.close(post.id, quiet=True)
        return result
