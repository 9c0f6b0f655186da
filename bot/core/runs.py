"""Quiz runs: one person takes a whole quiz in order, resumable after a restart."""

from __future__ import annotations

from dataclasses import replace

from bot.core.models import (
    AnswerResult,
    Chat,
    NoActiveRun,
    Person,
    RunSummary,
    ShownQuestion,
    UnknownQuiz,
)
from bot.core.posting import Posting
from bot.storage.base import PostRecord, RunRecord


class QuizRuns(Posting):
    async def start_run(
        self, person: Person, chat: Chat, quiz_id: str | None = None, *, locale: str | None = None
    ) -> ShownQuestion:
        """Start a whole quiz for one person, or resume their unfinished one."""
        locale = locale or await self.resolve_locale(person, chat)
        run = await self.storage.active_run(person.key, chat.key)
        if run is not None and quiz_id and run.quiz_id != quiz_id.strip().lower():
            await self.storage.finish_run(run.id, self.clock.now())  # switching quizzes
            run = None
        if run is None:
            if not quiz_id:
                raise NoActiveRun("no unfinished quiz to resume")
            quiz = self.catalog.get(quiz_id.strip().lower())
            if quiz is None:
                raise UnknownQuiz(quiz_id, self.quizzes(locale))
            await self.storage.upsert_person(person.key, person.name)
            await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
            run = await self.storage.create_run(
                person.key, chat.key, quiz.id, tuple(q.id for q in quiz.questions), locale,
                self.clock.now(),
            )
        question = await self.run_question(run, chat, locale)
        assert question is not None
        return question

    async def active_run(self, person: Person, chat: Chat) -> RunRecord | None:
        return await self.storage.active_run(person.key, chat.key)

    async def run_question(
        self, run: RunRecord, chat: Chat, locale: str
    ) -> ShownQuestion | None:
        """The run's current unanswered question, posting it if needed; None when done."""
        posts = await self.storage.run_posts(run.id)
        if posts and await self.storage.answer_of(posts[-1].id, run.person_key) is None:
            return self._render(posts[-1], locale)
        if len(posts) >= len(run.questions):
            return None
        return await self._post(
            chat, run.quiz_id, run.questions[len(posts)], locale, None, "run", run_id=run.id
        )

    async def _advance_run(
        self, run: RunRecord, post: PostRecord, result: AnswerResult, locale: str
    ) -> AnswerResult:
        posts = await self.storage.run_posts(run.id)
        if posts[-1].id != post.id:
            return result  # an older question of the run: recorded, the run stays where it is
        chat = Chat(run.chat_key)
        if len(posts) < len(run.questions):
            nxt = await self._post(
                chat, run.quiz_id, run.questions[len(posts)], locale, None, "run", run_id=run.id
            )
            return replace(result, next_question=nxt)
        await self.storage.finish_run(run.id, self.clock.now())
        return replace(result, run_summary=await self.run_summary(run.id, locale))

    async def run_summary(self, run_id: int, locale: str) -> RunSummary:
        run = await self.storage.get_run(run_id)
        assert run is not None
        quiz = self.catalog.quizzes[run.quiz_id]
        score = 0
        missed = []
        for post in await self.storage.run_posts(run_id):
            answer = await self.storage.answer_of(post.id, run.person_key)
            question = quiz.question(post.question_id)
            if answer is not None and answer.correct:
                score += 1
                continue
            missed.append(self._missed(quiz, question, answer.option if answer else None, locale))
        return RunSummary(
            run_id, quiz.id, quiz.title.get(locale), score, len(run.questions), tuple(missed)
        )
