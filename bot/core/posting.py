"""Questions posted in chats: choosing, rendering, closing and summaries; locales.

The base of QuizService (service.py); runs.py, boards.py and daily.py build on it.
"""

from __future__ import annotations

import random
from datetime import timedelta

from bot.clock import Clock, SystemClock
from bot.content import Catalog, Question, Quiz
from bot.content.schema import DEFAULT_LOCALE, LOCALES
from bot.core import selection
from bot.core.models import (
    Answerer,
    AnswerResult,
    AnswerStatus,
    Chat,
    MissedQuestion,
    Person,
    PostSummary,
    QuizError,
    QuizInfo,
    ShownQuestion,
    UnknownQuiz,
)
from bot.i18n import normalize
from bot.storage.base import PostRecord, Storage

FASTEST_SHOWN = 3


class UnsupportedLocale(QuizError):
    def __init__(self, code: str) -> None:
        super().__init__(f"unsupported language {code!r}; choose one of {', '.join(LOCALES)}")
        self.code = code


class Posting:
    def __init__(
        self,
        catalog: Catalog,
        storage: Storage,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.catalog = catalog
        self.storage = storage
        self.clock = clock or SystemClock()
        self.rng = rng or random.Random()

    def quizzes(self, locale: str = DEFAULT_LOCALE) -> list[QuizInfo]:
        return [
            QuizInfo(q.id, q.title.get(locale), tuple(q.tags), len(q.questions))
            for q in self.catalog
        ]

    def check_selector(self, selector: str | None, locale: str = DEFAULT_LOCALE) -> None:
        """Raise UnknownQuiz for a selector that names no quiz or tag (before closing
        anything on its account)."""
        self._select(selector, locale)

    def _select(self, selector: str | None, locale: str) -> list[Quiz]:
        if not selector:
            return list(self.catalog)
        key = selector.strip().lower()
        if quiz := self.catalog.get(key):
            return [quiz]
        if tagged := self.catalog.with_tag(key):
            return tagged
        raise UnknownQuiz(selector, self.quizzes(locale))

    async def resolve_locale(self, person: Person | None = None, chat: Chat | None = None) -> str:
        """The person's choice, else the chat's default, else the platform's, else English."""
        if person is not None and (choice := await self.storage.person_locale(person.key)):
            return choice
        if chat is not None and (choice := await self.storage.chat_locale(chat.key)):
            return choice
        if person is not None and (platform := normalize(person.platform_locale)):
            return platform
        return DEFAULT_LOCALE

    async def chat_locale(self, chat: Chat, fallback: str | None = None) -> str:
        """What the whole chat sees: the chat's chosen default, else `fallback`, else the
        platform's language for the chat (as last seen), else English."""
        if choice := await self.storage.chat_locale(chat.key):
            return choice
        for candidate in (fallback, chat.platform_locale):
            if locale := normalize(candidate):
                return locale
        return normalize(await self.storage.chat_platform_locale(chat.key)) or DEFAULT_LOCALE

    async def set_person_locale(self, person: Person, code: str | None) -> str | None:
        locale = self._check_locale(code)
        await self.storage.upsert_person(person.key, person.name)
        await self.storage.set_person_locale(person.key, locale)
        return locale

    async def set_chat_locale(self, chat: Chat, code: str | None) -> str | None:
        locale = self._check_locale(code)
        await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
        await self.storage.set_chat_locale(chat.key, locale)
        return locale

    async def migrate_chat(self, old_key: str, new_key: str) -> bool:
        """A chat changed its id (a Telegram group upgraded to a supergroup): keep its history,
        leaderboard, schedule and language under the new key."""
        return await self.storage.migrate_chat(old_key, new_key)

    @staticmethod
    def _check_locale(code: str | None) -> str | None:
        if code is None or code.lower() in ("auto", "reset", "default"):
            return None
        locale = normalize(code)
        if locale is None:
            raise UnsupportedLocale(code)
        return locale

    async def ask(
        self,
        chat: Chat,
        selector: str | None = None,
        *,
        person: Person | None = None,
        locale: str | None = None,
        open_for: timedelta | None = None,
        kind: str = "quiz",
    ) -> ShownQuestion:
        """Post a new question in `chat`. `person` narrows the choice for someone alone."""
        locale = locale or await self.chat_locale(chat)
        quiz_id, question_id = await self._choose(chat, selector, person, locale, kind)
        return await self._post(chat, quiz_id, question_id, locale, open_for, kind)

    async def _choose(
        self, chat: Chat, selector: str | None, person: Person | None, locale: str, kind: str
    ) -> tuple[str, str]:
        pool = selection.candidates(self._select(selector, locale))
        history = await self.storage.person_history(person.key) if person else None
        # daily questions cycle through their own pool, whatever /quiz asked meanwhile
        counts = await self.storage.posted_questions(
            chat.key, kind="daily" if kind == "daily" else None
        )
        return selection.pick(pool, counts, history, self.rng)

    async def _post(
        self,
        chat: Chat,
        quiz_id: str,
        question_id: str,
        locale: str,
        open_for: timedelta | None,
        kind: str,
        run_id: int | None = None,
    ) -> ShownQuestion:
        await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
        question = self.catalog.question(quiz_id, question_id)
        now = self.clock.now()
        post = await self.storage.create_post(
            chat.key,
            quiz_id,
            question_id,
            selection.shuffled_order(len(question.options), self.rng),
            locale,
            now,
            closes_at=now + open_for if open_for else None,
            run_id=run_id,
            kind=kind,
        )
        return self._render(post, locale)

    def _render(self, post: PostRecord, locale: str) -> ShownQuestion:
        quiz = self.catalog.quizzes[post.quiz_id]
        question = quiz.question(post.question_id)
        return ShownQuestion(
            post_id=post.id,
            chat_key=post.chat_key,
            quiz_id=quiz.id,
            quiz_title=quiz.title.get(locale),
            question_id=question.id,
            prompt=question.prompt.get(locale),
            options=tuple(question.options[i].text.get(locale) for i in post.order),
            correct=post.order.index(question.answer),
            explanation=question.explanation.get(locale),
            details=question.details.get(locale) if question.details else None,
            locale=locale,
            number=quiz.questions.index(question) + 1,
            total=len(quiz.questions),
            run_id=post.run_id,
            closes_at=post.closes_at,
        )

    async def show(self, post_id: int, locale: str | None = None) -> ShownQuestion | None:
        """Render an existing post again (another language, or after a restart)."""
        post = await self.storage.get_post(post_id)
        if post is None or self._question_of(post) is None:
            return None
        return self._render(post, locale or post.locale)

    def _question_of(self, post: PostRecord | None) -> Question | None:
        """The post's question, unless the content changed under it since it was posted."""
        if post is None or (quiz := self.catalog.get(post.quiz_id)) is None:
            return None
        try:
            question = quiz.question(post.question_id)
        except KeyError:
            return None
        return question if len(question.options) == len(post.order) else None

    async def live_count(self, post_id: int) -> int | None:
        """Answers so far on an open post; None once it is closed or unknown."""
        post = await self.storage.get_post(post_id)
        if post is None or post.closed_at is not None:
            return None
        return await self.storage.answer_count(post_id)

    async def bind(self, post_id: int, ref: str) -> None:
        """Remember a platform reference (poll id, message id) for a post."""
        await self.storage.bind_ref(post_id, ref)

    async def post_id_for(self, ref: str) -> int | None:
        post = await self.storage.post_by_ref(ref)
        return post.id if post else None

    def _result(
        self,
        status: AnswerStatus,
        post: PostRecord,
        question: Question,
        canonical: int | None,
        locale: str,
    ) -> AnswerResult:
        return AnswerResult(
            status=status,
            post_id=post.id,
            correct=canonical == question.answer,
            chosen=post.order.index(canonical) if canonical is not None else None,
            correct_option=post.order.index(question.answer),
            correct_text=question.options[question.answer].text.get(locale),
            chosen_text=question.options[canonical].text.get(locale) if canonical is not None
            else "",
            explanation=question.explanation.get(locale),
            details=question.details.get(locale) if question.details else None,
            locale=locale,
        )

    async def close(
        self, post_id: int, locale: str | None = None, *, quiet: bool = False
    ) -> PostSummary | None:
        """Close a post; only the call that closed it gets the summary (post it once, then
        call summary_posted). `quiet` closes it with no summary due."""
        post = await self.storage.get_post(post_id)
        if post is None or not await self.storage.close_post(post_id, self.clock.now(), quiet):
            return None
        if quiet or self._question_of(post) is None:
            if not quiet:  # its question left the content: nothing left to summarise
                await self.storage.mark_summary_posted(post_id, self.clock.now())
            return None
        return await self.summary(post, locale or post.locale)

    async def summary_posted(self, post_id: int) -> None:
        """The platform took the summary: it is not retried."""
        await self.storage.mark_summary_posted(post_id, self.clock.now())

    async def unposted_summaries(
        self,
        chat_prefix: str = "",
        grace: timedelta = timedelta(seconds=30),
        window: timedelta = timedelta(hours=6),
    ) -> list[PostSummary]:
        """Summaries closed between `window` and `grace` ago that no adapter confirmed
        (the platform failed after the post was closed); adapters post them again."""
        now = self.clock.now()
        posts = await self.storage.unposted_summaries(now - window, now - grace)
        return [
            await self.summary(p, p.locale)
            for p in posts
            if p.chat_key.startswith(chat_prefix) and self._question_of(p) is not None
        ]

    async def summary(self, post: PostRecord, locale: str) -> PostSummary:
        answers = await self.storage.answers_for_post(post.id)
        per_option = [0] * len(post.order)
        for a in answers:
            per_option[post.order.index(a.option)] += 1
        fastest = sorted((a for a in answers if a.correct), key=lambda a: a.elapsed_ms)
        return PostSummary(
            post_id=post.id,
            chat_key=post.chat_key,
            question=self._render(post, locale),
            answered=len(answers),
            right=sum(a.correct for a in answers),
            per_option=tuple(per_option),
            fastest=tuple(
                Answerer(a.name, a.person_key, a.elapsed_ms) for a in fastest[:FASTEST_SHOWN]
            ),
            refs=await self.storage.refs(post.id),
        )

    async def close_open(self, chat: Chat, kind: str | None = None) -> list[PostSummary]:
        """Close the chat's open questions (a new one replaces them); summaries to post."""
        summaries = []
        for post in await self.storage.open_posts(chat.key, kind=kind):
            if post.run_id is None and (summary := await self.close(post.id)):
                summaries.append(summary)
        return summaries

    async def close_due(self, chat_prefix: str = "") -> list[PostSummary]:
        """Close every question whose time is up (in chats whose key starts with `chat_prefix`,
        e.g. "tg:" for one adapter's chats); the adapter posts the summaries."""
        summaries = []
        for post in await self.storage.open_posts(due_before=self.clock.now()):
            if not post.chat_key.startswith(chat_prefix):
                continue
            if summary := await self.close(post.id):
                summaries.append(summary)
        return summaries

    @staticmethod
    def _missed(quiz: Quiz, question: Question, chosen: int | None, locale: str) -> MissedQuestion:
        return MissedQuestion(
            quiz_id=quiz.id,
            question_id=question.id,
            number=quiz.questions.index(question) + 1,
            prompt=question.prompt.get(locale),
            correct_text=question.options[question.answer].text.get(locale),
            chosen_text=question.options[chosen].text.get(locale) if chosen is not None else None,
            explanation=question.explanation.get(locale),
        )
