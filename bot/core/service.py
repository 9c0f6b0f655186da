"""QuizService: the one entry point every adapter calls.

Adapters translate a platform event into one of these calls and render what comes back. The
answer path is `answer()` here and `SqliteStorage.record_answer()`; the database's primary key
on (post, person) makes the first answer final.
"""

from __future__ import annotations

import logging
import random
from dataclasses import replace
from datetime import UTC, timedelta

from bot.clock import Clock, SystemClock
from bot.content import Catalog, Question, Quiz
from bot.content.schema import DEFAULT_LOCALE, LOCALES
from bot.core import selection
from bot.core.models import (
    Answerer,
    AnswerResult,
    AnswerStatus,
    BoardRow,
    Chat,
    Leaderboard,
    MissedQuestion,
    NoActiveRun,
    Period,
    Person,
    PersonStats,
    PostSummary,
    QuizError,
    QuizInfo,
    QuizStats,
    RunSummary,
    ScheduleStatus,
    ShownQuestion,
    UnknownQuiz,
)
from bot.core.schedule import (
    Schedule,
    ScheduleError,
    day_streaks,
    parse_time,
    parse_zone,
)
from bot.i18n import normalize
from bot.storage.base import AnswerRecord, NewPost, PostRecord, RunRecord, Storage

log = logging.getLogger(__name__)

FASTEST_SHOWN = 3


class UnsupportedLocale(QuizError):
    def __init__(self, code: str) -> None:
        super().__init__(f"unsupported language {code!r}; choose one of {', '.join(LOCALES)}")
        self.code = code


class QuizService:
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

    # catalog ---------------------------------------------------------------------------
    def quizzes(self, locale: str = DEFAULT_LOCALE) -> list[QuizInfo]:
        return [
            QuizInfo(q.id, q.title.get(locale), tuple(q.tags), len(q.questions))
            for q in self.catalog
        ]

    def _select(self, selector: str | None, locale: str) -> list[Quiz]:
        if not selector:
            return list(self.catalog)
        key = selector.strip().lower()
        if quiz := self.catalog.get(key):
            return [quiz]
        if tagged := self.catalog.with_tag(key):
            return tagged
        raise UnknownQuiz(selector, self.quizzes(locale))

    def check_selector(self, selector: str | None, locale: str = DEFAULT_LOCALE) -> None:
        """Raise UnknownQuiz for a selector that names no quiz or tag (before closing
        anything on its account)."""
        self._select(selector, locale)

    # locales ---------------------------------------------------------------------------
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

    @staticmethod
    def _check_locale(code: str | None) -> str | None:
        if code is None or code.lower() in ("auto", "reset", "default"):
            return None
        locale = normalize(code)
        if locale is None:
            raise UnsupportedLocale(code)
        return locale

    # asking ----------------------------------------------------------------------------
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

    # answering -------------------------------------------------------------------------
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

    # closing ---------------------------------------------------------------------------
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

    # quiz runs -------------------------------------------------------------------------
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

    # boards, stats, review -------------------------------------------------------------
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
        rows, me = await self.storage.leaderboard(chat_key, since[period], limit, person_key)
        convert = [
            BoardRow(r.rank, r.person_key, r.name, r.correct, r.answered, r.time_ms) for r in rows
        ]
        mine = BoardRow(me.rank, me.person_key, me.name, me.correct, me.answered, me.time_ms) \
            if me else None
        return Leaderboard(chat_key, period, tuple(convert), mine)

    async def stats(self, person: Person, locale: str = DEFAULT_LOCALE) -> PersonStats:
        totals = await self.storage.person_totals(person.key)
        current, best = await self.storage.person_streaks(person.key)
        days, latest = await self.storage.daily_days(person.key)
        day_current, day_best = day_streaks(days, latest)
        per_quiz = tuple(
            QuizStats(
                quiz_id,
                q.title.get(locale) if (q := self.catalog.get(quiz_id)) else quiz_id,
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
        )

    # daily schedules --------------------------------------------------------------------
    async def set_schedule(
        self,
        chat: Chat,
        at: str,
        tz: str | None = None,
        selector: str | None = None,
        *,
        open_minutes: int | None = None,
        by: Person | None = None,
    ) -> ScheduleStatus:
        """Validate everything first; a bad time, zone or quiz raises and changes nothing.
        Who may call this is the adapter's check (chat admins)."""
        if selector:
            self._select(selector, DEFAULT_LOCALE)  # raises UnknownQuiz
        if open_minutes is not None and not 1 <= open_minutes <= 24 * 60:
            raise ScheduleError("the open time must be between 1 minute and 24 hours")
        schedule = Schedule(
            chat_key=chat.key,
            at=parse_time(at),
            tz=parse_zone(tz),
            selector=selector.strip().lower() if selector else None,
            open_minutes=open_minutes,
            updated_at=self.clock.now(),
        )
        await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
        await self.storage.set_schedule(schedule, by.key if by else None)
        status = await self.schedule_status(chat)
        assert status is not None
        return status

    async def remove_schedule(self, chat: Chat) -> bool:
        return await self.storage.delete_schedule(chat.key)

    async def schedule_status(self, chat: Chat) -> ScheduleStatus | None:
        schedule = await self.storage.get_schedule(chat.key)
        if schedule is None:
            return None
        now = self.clock.now()
        posted = await self.storage.daily_day_of(chat.key, schedule.local_date(now))
        moment = schedule.next_moment(now, posted is not None)
        return ScheduleStatus(schedule, moment.astimezone(schedule.zone))

    async def schedules(self) -> list[Schedule]:
        return await self.storage.schedules()

    async def claim_daily(
        self, schedule: Schedule
    ) -> tuple[ShownQuestion, list[PostSummary]] | None:
        """If today's question of `schedule` is due and unclaimed, create it (exactly once per
        local day, enforced by the database) and close the previous daily question."""
        now = self.clock.now()
        day = schedule.due_day(now)
        if day is None or await self.storage.daily_day_of(schedule.chat_key, day) is not None:
            return None
        chat = Chat(schedule.chat_key)
        locale = await self.chat_locale(chat)
        try:
            quiz_id, question_id = await self._choose(chat, schedule.selector, None, locale,
                                                      "daily")
        except UnknownQuiz:  # the pack was removed since; fall back to every quiz
            quiz_id, question_id = await self._choose(chat, None, None, locale, "daily")
        question = self.catalog.question(quiz_id, question_id)
        open_for = timedelta(minutes=schedule.open_minutes) if schedule.open_minutes else None
        post = await self.storage.claim_daily(
            schedule.chat_key,
            day,
            NewPost(
                chat.key, quiz_id, question_id,
                selection.shuffled_order(len(question.options), self.rng), locale, now,
                closes_at=now + open_for if open_for else None, kind="daily",
            ),
            now,
        )
        if post is None:
            return None  # another process claimed the day first
        summaries = []
        for old in await self.storage.open_posts(chat.key, kind="daily"):
            if old.id != post.id and (summary := await self.close(old.id)):
                summaries.append(summary)
        return self._render(post, locale), summaries

    async def daily_published(self, post_id: int) -> None:
        await self.storage.mark_daily_published(post_id, self.clock.now())

    async def unpublished_dailies(self, grace: timedelta) -> list[ShownQuestion]:
        """Daily questions claimed more than `grace` ago that never reached their chat."""
        posts = await self.storage.unpublished_dailies(self.clock.now() - grace)
        return [self._render(p, p.locale) for p in posts]

    async def review(
        self, person: Person, locale: str = DEFAULT_LOCALE, limit: int = 10
    ) -> list[MissedQuestion]:
        """Questions whose latest answer by this person was wrong, for a second look."""
        history = await self.storage.person_history(person.key)
        missed = []
        for (quiz_id, question_id), right in history.items():
            quiz = self.catalog.get(quiz_id)
            if right or quiz is None:
                continue
            try:
                question = quiz.question(question_id)
            except KeyError:
                continue
            missed.append(self._missed(quiz, question, None, locale))
        return missed[:limit]
