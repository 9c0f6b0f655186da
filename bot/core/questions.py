"""Questions posted in chats: choosing one, creating its post, rendering, closing, summaries.

A post is one question shown in one chat with its own option order. "Is it open?" and "whose
is it?" are asked of the post here and nowhere else.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import Protocol

from bot.content import Catalog, Question, Quiz
from bot.content.items import DEFAULT_LOCALE, Kind
from bot.core import answer_text, difficulty, grading, misconceptions, selection
from bot.core.clock import Clock
from bot.core.errors import UnknownQuiz
from bot.core.models import (
    Answerer,
    AnswerResult,
    AnswerStatus,
    Chat,
    MissedQuestion,
    Person,
    PostSummary,
    QuizInfo,
    ShownQuestion,
)
from bot.core.ports import (
    AnswerRecord,
    AnswerStore,
    ChatStore,
    ClosingStore,
    DifficultyStore,
    PeopleStore,
    PostRecord,
    PostStore,
    RoundStore,
    RunStore,
    SettingsStore,
)


class QuestionsStorage(
    PostStore, ClosingStore, AnswerStore, PeopleStore, ChatStore, RunStore, RoundStore,
    DifficultyStore, SettingsStore, Protocol,
):
    """What Questions reads and writes."""


FASTEST_SHOWN = 3
TYPED_SHOWN = 5  # a typed kind's most common answers on its close summary
Position = tuple[int, int]  # (number, total): "question 2 of 5" in a round or quiz run


def is_open(post: PostRecord, now: datetime) -> bool:
    return post.closed_at is None and (post.closes_at is None or now < post.closes_at)


def option_order(question: Question, rng: random.Random) -> tuple[int, ...]:
    """A new post's option order (order[shown] = canonical): shuffled, except a true/false
    (True, then False, always) and an order question, which is never shown in its right
    order (that would give the answer away): a shuffle that lands on it is drawn again."""
    size = len(question.options)
    if question.kind is Kind.TRUEFALSE:
        return tuple(range(size))
    order = selection.shuffled_order(size, rng)
    while question.kind is Kind.ORDER and size > 1 and order == tuple(range(size)):
        order = selection.shuffled_order(size, rng)
    return order


class Questions:
    def __init__(
        self, catalog: Catalog, storage: QuestionsStorage, clock: Clock, rng: random.Random
    ) -> None:
        self.catalog = catalog
        self.storage = storage
        self.clock = clock
        self.rng = rng

    # the catalog -------------------------------------------------------------------------
    def quizzes(self, locale: str = DEFAULT_LOCALE) -> list[QuizInfo]:
        return [
            QuizInfo(q.id, q.title.get(locale), tuple(q.tags), len(q.questions))
            for q in self.catalog
        ]

    def select(self, selector: str | None) -> list[Quiz]:
        """The quizzes a selector (a quiz id or a tag, any case; None: all) names."""
        if not selector:
            return list(self.catalog)
        key = selector.strip().lower()
        if misconceptions.named(key):  # a follow-up round: that quiz's questions carrying it
            return [misconceptions.follow_up(self.catalog, key)[0]]
        if quiz := self.catalog.get(key):
            return [quiz]
        if tagged := self.catalog.with_tag(key):
            return tagged
        raise UnknownQuiz(selector, self.quizzes())

    def quiz_named(self, selector: str | None) -> Quiz | None:
        """The quiz with exactly this id (not a tag)."""
        return self.catalog.get(selector.strip().lower()) if selector else None

    def question_of(self, post: PostRecord | None) -> Question | None:
        """The post's question, unless the content changed under it since it was posted (a
        quiz withdrawn with /unpublish is still there: its open questions run their time)."""
        if post is None or (quiz := self.catalog.quizzes.get(post.quiz_id)) is None:
            return None
        try:
            question = quiz.question(post.question_id)
        except KeyError:
            return None
        return question if len(question.options) == len(post.order) else None

    # posting -----------------------------------------------------------------------------
    async def choose(
        self, chat: Chat, selector: str | None, person: Person | None, *, daily: bool = False,
        kinds: Collection[Kind] | None = None,
    ) -> tuple[str, str]:
        """`kinds`: only questions of these kinds (None: every kind)."""
        pool = misconceptions.follow_up(self.catalog, selector, kinds)[1] \
            if selector and misconceptions.named(selector) \
            else selection.candidates(self.select(selector), kinds)
        history = await self.storage.person_history(person.key) if person else None
        # daily questions cycle through their own pool, whatever /quiz asked meanwhile
        counts = await self.storage.posted_questions(chat.key, kind="daily" if daily else None)
        # someone alone gets the question nearest the target success rate (difficulty.py)
        success = await self.predicted(person, pool) if person else None
        own = await self.storage.get_chat_settings(chat.key) if person else None
        target = own.target / 100 if own and own.target else selection.TARGET
        return selection.pick(pool, counts, history, self.rng, success, target)

    async def predicted(
        self, person: Person, pool: Sequence[selection.Candidate]
    ) -> dict[selection.Candidate, float]:
        """The chance that `person` answers each candidate right, as the difficulty model's
        kept ratings and the pack's stated difficulty and concepts predict it."""
        kept = await self.storage.ability(person.key)
        rated = await self.storage.question_difficulties(sorted({quiz for quiz, _ in pool}))

        def meta(key: selection.Candidate) -> tuple[str | None, tuple[str, ...]]:
            quiz = self.catalog.quizzes.get(key[0])
            try:
                question = quiz.question(key[1]) if quiz is not None else None
            except KeyError:
                question = None
            if question is None or question.meta is None:
                return None, ()
            return question.meta.difficulty, question.meta.concepts

        learner = difficulty.learner(kept.ability, kept.firsts, lambda key: meta(key)[1])
        success = {}
        for key in pool:
            stated, concepts = meta(key)
            success[key] = learner.success(difficulty.difficulty_of(rated.get(key), stated),
                                           concepts)
        return success

    async def ask(
        self,
        chat: Chat,
        selector: str | None,
        locale: str,
        *,
        person: Person | None = None,
        owner: Person | None = None,
        open_for: timedelta | None = None,
    ) -> ShownQuestion:
        """Post a new question in `chat`. `person` narrows the choice for someone alone;
        `owner` is the only person who may answer it."""
        quiz_id, question_id = await self.choose(chat, selector, person)
        return await self.post(chat, quiz_id, question_id, locale, open_for=open_for,
                               owner=owner)

    async def post(
        self,
        chat: Chat,
        quiz_id: str,
        question_id: str,
        locale: str,
        *,
        open_for: timedelta | None = None,
        kind: str = "quiz",
        run_id: int | None = None,
        owner: Person | None = None,
        position: Position | None = None,
    ) -> ShownQuestion:
        """`position`: (number, total) in the run it belongs to."""
        await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
        if owner is not None:
            await self.storage.upsert_person(owner.key, owner.known_name)
        question = self.catalog.question(quiz_id, question_id)
        now = self.clock.now()
        post = await self.storage.create_post(
            chat.key, quiz_id, question_id, option_order(question, self.rng), locale, now,
            closes_at=now + open_for if open_for else None, run_id=run_id, kind=kind,
            owner_key=owner.key if owner else None,
        )
        return self.render(post, locale, position)

    def render(
        self, post: PostRecord, locale: str, position: Position | None = None
    ) -> ShownQuestion:
        """`position`: (number, total) in its round or run; None: a question on its own."""
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
            correct=answer_text.one_right(question, post.order),
            explanation=question.explanation.get(locale),
            details=question.details.get(locale) if question.details else None,
            locale=locale,
            number=position[0] if position else None,
            total=position[1] if position else None,
            run_id=post.run_id,
            closes_at=post.closes_at,
            owner_key=post.owner_key,
            code=question.code.text.get(locale) if question.code else None,
            code_language=question.code.language if question.code else "text",
            formula=question.formula.get(locale) if question.formula else None,
            image=quiz.image_path(question, locale),
            image_alt=question.image_alt.get(locale) if question.image_alt else None,
            kind=question.kind,
            correct_set=answer_text.right_shown(question, post.order),
            unit=question.numeric.unit.get(locale)
            if question.numeric is not None and question.numeric.unit is not None else None,
            explanation_image=quiz.explanation_image_path(question, locale),
            explanation_image_alt=question.explanation_image_alt.get(locale)
            if question.explanation_image_alt else None,
            daily=post.kind == "daily",
        )

    async def show(self, post_id: int, locale: str | None = None) -> ShownQuestion | None:
        """Render an existing post again (another language, or after a restart)."""
        post = await self.storage.get_post(post_id)
        if post is None or self.question_of(post) is None:
            return None
        return self.render(post, locale or post.locale, await self.position(post))

    async def open_typed(self, chat_key: str, kinds: Collection[Kind]) -> int | None:
        """The chat's newest open question of one of `kinds`: what a plain message in a
        private chat answers where a platform takes typed answers that way (Telegram)."""
        for post in sorted(await self.storage.open_posts(chat_key), key=lambda p: -p.id):
            question = self.question_of(post)
            if question is not None and question.kind in kinds:
                return post.id
        return None

    async def position(self, post: PostRecord) -> Position | None:
        """The post's (number, total) in its quiz run or the chat's running round."""
        if post.run_id is not None:
            run = await self.storage.get_run(post.run_id)
            ids = [p.id for p in await self.storage.run_posts(post.run_id)]
            if run is not None and post.id in ids:
                return ids.index(post.id) + 1, len(run.questions)
        elif post.kind == "quiz" and post.owner_key is None:
            for record in await self.storage.active_rounds(post.chat_key):
                if post.id in record.posts:
                    return record.posts.index(post.id) + 1, record.total
        return None

    async def live_count(self, post_id: int) -> int | None:
        """Answers so far on an open post; None once it is closed or unknown."""
        post = await self.storage.get_post(post_id)
        if post is None or post.closed_at is not None:
            return None
        return await self.storage.answer_count(post_id)

    async def bind(self, post_id: int, *refs: str) -> None:
        """Remember platform references (poll id, message id) for a post, together: a crash
        never leaves a poll bound without its message (the summary replies to the message)."""
        await self.storage.bind_ref(post_id, *refs)

    async def post_id_for(self, ref: str) -> int | None:
        post = await self.storage.post_by_ref(ref)
        return post.id if post else None

    def result(
        self,
        status: AnswerStatus,
        post: PostRecord,
        question: Question,
        canonical: int | None,
        locale: str,
        *,
        response: str | None = None,
        correct: bool | None = None,
    ) -> AnswerResult:
        """The person's answer as stored: `canonical` (the option of a choice or a
        true/false; -1 for the other kinds, None for no answer) and `response` (the other
        kinds' canonical answer), `correct` as graded (None: a choice against its key)."""
        one = canonical is not None and canonical >= 0 and canonical in post.order
        right = answer_text.one_right(question, post.order)
        return AnswerResult(
            status=status,
            post_id=post.id,
            correct=(canonical == question.answer) if correct is None else correct,
            chosen=post.order.index(canonical) if one and canonical is not None else None,
            correct_option=None if right < 0 else right,
            correct_text=answer_text.correct_text(question, post.order, locale),
            chosen_text=answer_text.chosen_text(question, canonical, locale),
            explanation=question.explanation.get(locale),
            details=question.details.get(locale) if question.details else None,
            locale=locale,
            response_text=answer_text.response_text(question, post.order, response, locale),
            partial=answer_text.partial(question, response) if canonical is not None
            else None,
            personal=post.owner_key is not None,
        )

    def earlier(
        self, status: AnswerStatus, post: PostRecord, question: Question,
        earlier: AnswerRecord | None, locale: str,
    ) -> AnswerResult:
        """A result showing a stored answer (or none, `earlier` None)."""
        if earlier is None:
            return self.result(status, post, question, None, locale)
        # a choice is right by the current key (fixed since, maybe); the others as graded
        graded = None if earlier.response is None and earlier.option >= 0 else earlier.correct
        return self.result(status, post, question, earlier.option, locale,
                           response=earlier.response, correct=graded)

    # closing -----------------------------------------------------------------------------
    async def close(
        self, post_id: int, locale: str | None = None, *, quiet: bool = False
    ) -> PostSummary | None:
        """Close a post; only the call that closed it gets the summary, which is then due
        (Delivery posts it and confirms it). `quiet` closes it with no summary due."""
        post = await self.storage.get_post(post_id)
        if post is None or not await self.storage.close_post(post_id, self.clock.now(), quiet):
            return None
        if quiet:
            return None
        if self.question_of(post) is None:  # its question left the content: nothing to say
            await self.storage.mark_summary_posted(post_id, self.clock.now())
            return None
        return await self.summary(post, locale or post.locale)

    async def close_open(self, chat_key: str, kind: str) -> list[PostSummary]:
        """Close the chat's open shared questions of `kind` (private ones are left alone)."""
        summaries = []
        for post in await self.storage.open_posts(chat_key, kind=kind):
            if post.run_id is None and post.owner_key is None and (
                summary := await self.close(post.id)
            ):
                summaries.append(summary)
        return summaries

    async def close_due(self) -> list[PostSummary]:
        """Close every question whose time is up."""
        summaries = []
        for post in await self.storage.open_posts(due_before=self.clock.now()):
            if summary := await self.close(post.id):
                summaries.append(summary)
        return summaries

    async def summary(self, post: PostRecord, locale: str) -> PostSummary:
        answers = await self.storage.answers_for_post(post.id)
        question = self.question_of(post)
        per_option = [0] * len(post.order)
        typed: Counter[str] = Counter()
        for a in answers:
            if a.option in post.order:
                per_option[post.order.index(a.option)] += 1
            elif question is not None and question.kind is Kind.MULTI:
                for c in grading.stored_options(a.response):  # each pick counts for its option
                    if c in post.order:
                        per_option[post.order.index(c)] += 1
            elif question is not None and a.response:  # a number, a text, an order
                typed[answer_text.response_text(question, post.order, a.response, locale)] += 1
        fastest = sorted((a for a in answers if a.correct), key=lambda a: a.elapsed_ms)
        return PostSummary(
            post_id=post.id,
            chat_key=post.chat_key,
            question=self.render(post, locale, await self.position(post)),
            answered=len(answers),
            right=sum(a.correct for a in answers),
            # an order's or a typed kind's answers are listed (`typed`), not counted per option
            per_option=tuple(per_option) if question is None
            or question.kind in (Kind.CHOICE, Kind.TRUEFALSE, Kind.MULTI) else (),
            fastest=tuple(
                Answerer(a.name, a.person_key, a.elapsed_ms) for a in fastest[:FASTEST_SHOWN]
            ),
            refs=await self.storage.refs(post.id),
            correct_text=answer_text.correct_text(question, post.order, locale)
            if question is not None else "",
            typed=tuple(typed.most_common(TYPED_SHOWN)),
        )

    async def unposted_summaries(
        self, window: timedelta, grace: timedelta = timedelta(0)
    ) -> list[PostSummary]:
        """Closed between `window` and `grace` ago with a summary no platform confirmed."""
        now = self.clock.now()
        posts = await self.storage.unposted_summaries(now - window, now - grace)
        return [await self.summary(p, p.locale) for p in posts if self.question_of(p)]

    async def summary_posted(self, post_id: int) -> None:
        """The platform took the summary (or never can): it is not offered again."""
        await self.storage.mark_summary_posted(post_id, self.clock.now())


def missed(
    quiz: Quiz, question: Question, answer: AnswerRecord | None, locale: str,
    order: Sequence[int] | None = None,
) -> MissedQuestion:
    """A question answered wrong (or not at all: `answer` None), with what was answered;
    `order`: the post's, for the letters its options had (None: as the pack lists them)."""
    shown = tuple(range(len(question.options))) if order is None else tuple(order)
    chosen = None
    if answer is not None:
        chosen = answer_text.chosen_text(question, answer.option, locale) or \
            answer_text.response_text(question, shown, answer.response, locale) or None
    return MissedQuestion(
        quiz_id=quiz.id,
        question_id=question.id,
        number=quiz.questions.index(question) + 1,
        prompt=question.prompt.get(locale),
        correct_text=answer_text.correct_text(question, shown, locale),
        chosen_text=chosen,
        explanation=question.explanation.get(locale),
    )
