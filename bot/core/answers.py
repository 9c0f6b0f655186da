"""The hot path: a person answers; it is stored once and final, then shown.

An adapter turns a poll answer, a button click, a Submit of several picks, a typed reply or
an order into `Answers.answer(post, person, response)` (models.Response: a shown option's
index, or Picks, Typed, Ordered), graded by bot/core/grading.py against the question's kind;
storage (`record_answer`) inserts it, the database's unique key on (post, person) making the
first answer final. Nothing is acknowledged to the platform before this returns.

An accepted answer costs one storage call that waits for the disk (`record_answer`, which also
stores the person) and no other I/O: the post and the person's language come from storage's
caches, and what a post's answers show is computed once per post, option and language
(`_Shown`), not per answer.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from bot.content import Question, Quiz
from bot.core import grading
from bot.core.clock import Clock
from bot.core.locales import Locales
from bot.core.models import AnswerResult, AnswerStatus, Chat, Confidence, Person, Response
from bot.core.ports import AnswerRecord, AnswerStore, PostRecord, PostStore, RunStore
from bot.core.questions import Questions, is_open
from bot.core.quiz_runs import Runs
from bot.core.review import Review


class AnswersStorage(AnswerStore, PostStore, RunStore, Protocol):
    """What Answers reads and writes."""


# what an answer's status counts as in the operator's metrics (ports.Meter)
OUTCOMES = {
    AnswerStatus.ACCEPTED: "accepted",
    AnswerStatus.ALREADY_ANSWERED: "repeat",
    AnswerStatus.CLOSED: "closed",
}  # the rest (unknown post, invalid option, someone else's question): "refused"
PLATFORMS = {"tg": "telegram", "dc": "discord", "console": "console"}  # by person key prefix


def outcome_of(status: AnswerStatus) -> str:
    return OUTCOMES.get(status, "refused")


def platform_of(person: Person) -> str:
    """The platform label of a person key ("tg:123" -> telegram): a fixed, small set."""
    return PLATFORMS.get(person.key.partition(":")[0], "other")


SHOWN_CACHE = 4096  # posts answered lately (each holds a few results per language)


@dataclass(slots=True)
class _Shown:
    """One post's question as its answers show it: resolved once, not per answer."""

    quiz: Quiz  # the catalog's object, to notice the catalog changing
    question: Question
    key: grading.Key  # what its answers are graded against
    # (canonical option, locale) -> ACCEPTED, for the kinds answered with one option (the
    # other kinds' results depend on the answer itself, and are rendered each time)
    results: dict[tuple[int, str], AnswerResult]


class Answers:
    def __init__(
        self, questions: Questions, runs: Runs, locales: Locales, storage: AnswersStorage,
        clock: Clock, review: Review,
    ) -> None:
        self.questions = questions
        self.runs = runs
        self.review = review
        self.locales = locales
        self.storage = storage
        self.clock = clock
        self._shown: OrderedDict[int, _Shown] = OrderedDict()  # post id -> _Shown, bounded
        # catches up with packs other processes published (Authoring.refresh): whether the
        # catalog changed. Its storage failure propagates, so the answer is retried later
        self.reload_packs: Callable[[], Awaitable[bool]] | None = None

    def _shown_for(self, post: PostRecord) -> _Shown | None:
        shown = self._shown.get(post.id)
        if shown is not None and self.questions.catalog.quizzes.get(post.quiz_id) is shown.quiz:
            self._shown.move_to_end(post.id)
            return shown
        question = self.questions.question_of(post)
        quiz = self.questions.catalog.quizzes.get(post.quiz_id)
        if question is None or quiz is None:
            return None
        shown = _Shown(quiz, question, grading.Key.of(question), {})
        self._shown[post.id] = shown
        if len(self._shown) > SHOWN_CACHE:
            self._shown.popitem(last=False)
        return shown

    def _accepted(
        self, post: PostRecord, shown: _Shown, graded: grading.Graded, locale: str
    ) -> AnswerResult:
        """An ACCEPTED result of a choice depends only on the post, the option and the
        language: it is rendered once (by Questions.result, the one place results are
        rendered) and shared — AnswerResult is immutable."""
        if graded.response is not None or graded.option < 0:
            return self.questions.result(
                AnswerStatus.ACCEPTED, post, shown.question, graded.option, locale,
                response=graded.response, correct=graded.correct)
        result = shown.results.get((graded.option, locale))
        if result is None:
            result = self.questions.result(
                AnswerStatus.ACCEPTED, post, shown.question, graded.option, locale
            )
            shown.results[(graded.option, locale)] = result
        return result

    async def answer(
        self, post_id: int, person: Person, response: Response, *, locale: str | None = None,
        confidence: Confidence | None = None,
    ) -> AnswerResult:
        """Record `person`'s answer; return only after it is committed. A response of the
        wrong shape for the question's kind, or a typed one that cannot be read, is
        INVALID_OPTION and changes nothing (`expected` says what to type)."""
        post = await self.storage.get_post(post_id)
        shown = None if post is None else self._shown_for(post)
        if post is not None and shown is None and self.reload_packs is not None:
            # a quiz published in another process a moment ago: never drop its answers
            shown = self._shown_for(post) if await self.reload_packs() else None
        if post is None or shown is None:
            return AnswerResult(AnswerStatus.UNKNOWN_POST, post_id)
        chat = Chat(post.chat_key)
        graded = grading.grade(shown.key, post.order, response)
        if isinstance(graded, grading.Unreadable):
            locale = locale or await self.locales.for_person(person, chat)
            return AnswerResult(AnswerStatus.INVALID_OPTION, post_id, locale=locale,
                                expected=graded.expected)
        if post.owner_key is not None and post.owner_key != person.key:
            # someone else's private question or quiz run (a forwarded poll, a shared DM)
            locale = locale or await self.locales.for_person(person, chat)
            return AnswerResult(AnswerStatus.NOT_YOURS, post_id, locale=locale)

        now = self.clock.now()
        if not is_open(post, now):
            locale = locale or await self.locales.for_person(person, chat)
            earlier = await self.storage.answer_of(post_id, person.key)
            if earlier is None:
                return self.questions.result(
                    AnswerStatus.CLOSED, post, shown.question, None, locale
                )
            return self.questions.earlier(
                AnswerStatus.ALREADY_ANSWERED, post, shown.question, earlier, locale
            )
        sure = confidence if isinstance(confidence, Confidence) else None
        outcome, earlier = await self.storage.record_answer(
            AnswerRecord(
                post_id=post.id,
                person_key=person.key,
                option=graded.option,
                correct=graded.correct,
                answered_at=now,
                elapsed_ms=max(0, int((now - post.created_at).total_seconds() * 1000)),
                name=person.known_name,  # stored with the answer: no separate upsert
                response=graded.response,
                confidence=None if sure is None else int(sure),
            )
        )
        # after the write: storage cached the person's language while it was there
        locale = locale or await self.locales.for_person(person, chat)
        if outcome == "closed":
            return self.questions.result(AnswerStatus.CLOSED, post, shown.question, None, locale)
        if outcome == "duplicate":
            assert earlier is not None
            return self.questions.earlier(
                AnswerStatus.ALREADY_ANSWERED, post, shown.question, earlier, locale
            )
        result = self._accepted(post, shown, graded, locale)
        if post.run_id is not None:
            run = await self.storage.get_run(post.run_id)
            if run is not None:
                return await self.runs.advance(run, post, result, locale, person)
        elif post.owner_key is not None:
            # one person's single question is done once answered: the reply is its summary;
            # a review question's reply brings the next due card
            await self.questions.close(post.id, quiet=True)
            return await self.review.answered(post, person, result)
        return result
