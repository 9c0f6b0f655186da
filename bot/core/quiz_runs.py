"""Quiz runs: one person takes a whole quiz in order, resumable after a restart."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from bot.content import Quiz
from bot.core.clock import Clock
from bot.core.errors import NoActiveRun
from bot.core.models import AnswerResult, Chat, Person, RunSummary, ShownQuestion
from bot.core.ports import AnswerStore, ChatStore, PeopleStore, PostRecord, RunRecord, RunStore
from bot.core.questions import Questions, missed


class RunsStorage(RunStore, AnswerStore, PeopleStore, ChatStore, Protocol):
    """What Runs reads and writes."""


class Runs:
    def __init__(self, questions: Questions, storage: RunsStorage, clock: Clock) -> None:
        self.questions = questions
        self.storage = storage
        self.clock = clock

    async def active(self, person: Person, chat: Chat) -> RunRecord | None:
        return await self.storage.active_run(person.key, chat.key)

    async def start(
        self, person: Person, chat: Chat, quiz: Quiz | None, locale: str
    ) -> ShownQuestion:
        """Run `quiz` for one person (resuming it if it is the unfinished one; another
        unfinished quiz is ended), or with no quiz resume the unfinished one."""
        run = await self.active(person, chat)
        if run is not None and quiz is not None and run.quiz_id != quiz.id:
            await self.storage.finish_run(run.id, self.clock.now())  # switching quizzes
            run = None
        if run is None:
            if quiz is None:
                raise NoActiveRun()
            await self.storage.upsert_person(person.key, person.known_name)
            await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
            run = await self.storage.create_run(
                person.key, chat.key, quiz.id, tuple(q.id for q in quiz.questions), locale,
                self.clock.now(),
            )
        question = await self.current(run, chat, locale, person)
        assert question is not None
        return question

    async def current(
        self, run: RunRecord, chat: Chat, locale: str, person: Person | None = None
    ) -> ShownQuestion | None:
        """The run's current unanswered question, posting it if needed (for `person`, the
        run's, with the name the platform gave); None when done."""
        posts = await self.storage.run_posts(run.id)
        if posts and await self.storage.answer_of(posts[-1].id, run.person_key) is None:
            return self.questions.render(posts[-1], locale, (len(posts), len(run.questions)))
        if len(posts) >= len(run.questions):
            return None
        return await self._post_next(run, chat, len(posts), locale, person)

    async def _post_next(
        self, run: RunRecord, chat: Chat, index: int, locale: str, person: Person | None
    ) -> ShownQuestion:
        return await self.questions.post(
            chat, run.quiz_id, run.questions[index], locale, kind="run", run_id=run.id,
            # without the person at hand, a blank name: it keeps the stored one
            owner=person if person is not None else Person(run.person_key, ""),
            position=(index + 1, len(run.questions)),
        )

    async def advance(
        self, run: RunRecord, post: PostRecord, result: AnswerResult, locale: str,
        person: Person,
    ) -> AnswerResult:
        """After `person`'s accepted answer: the run's next question, or its summary at the
        end."""
        posts = await self.storage.run_posts(run.id)
        if posts[-1].id != post.id:
            return result  # an older question of the run: recorded, the run stays where it is
        if len(posts) < len(run.questions):
            nxt = await self._post_next(run, Chat(run.chat_key), len(posts), locale, person)
            return replace(result, next_question=nxt)
        await self.storage.finish_run(run.id, self.clock.now())
        return replace(result, run_summary=await self.summary(run.id, locale))

    async def summary(self, run_id: int, locale: str) -> RunSummary:
        run = await self.storage.get_run(run_id)
        assert run is not None
        quiz = self.questions.catalog.quizzes[run.quiz_id]
        score = 0
        wrong = []
        for post in await self.storage.run_posts(run_id):
            answer = await self.storage.answer_of(post.id, run.person_key)
            question = quiz.question(post.question_id)
            if answer is not None and answer.correct:
                score += 1
                continue
            wrong.append(missed(quiz, question, answer, locale, post.order))
        return RunSummary(
            run_id, quiz.id, quiz.title.get(locale), score, len(run.questions), tuple(wrong)
        )
