"""Spaced review with FSRS: every question a person answered is a card, scheduled by `fsrs`.

Cards are derived from the answers: a person's cards are their answers replayed through one
FSRS scheduler (bot/core/deck.py), oldest first (fuzzing off, so a replay always gives the same
due dates). An answer therefore stays one write on the hot path, and a card can never disagree
with the answers it comes from (a second process, a crash between two writes, an answer
committed late). /review, /stats and a reminder replay the person's answers when they read
their cards (microseconds per answer): they must see the answer just given, which the
materializer may not have applied yet. The dashboard and the Mini App's /progress read the
same cards from the table the materializers keep with the same rules (bot/storage/cards.py:
`cards`, and per chat and due day `card_days`), lagging the answers as the boards do.

Each answer rates its card:
- wrong → Again;
- right, on the person's own question (a run, a review, a private question), where the time
  since it was shown is thinking time: within FAST → Easy, after SLOW → Hard, else Good;
- right in a shared chat (the time since the post is not thinking time) → Good.

/review posts the due cards one by one as the person's own questions (kind "review") in the
chat it was asked in (the adapters run it privately); each answer is stored like any other,
so it moves its card, and its result brings the next due card. /remind sets one private
message a day (a Schedule whose chat_key is the person's key), sent by the core scheduler
when cards are due, claimed once per person and local date in the database.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from typing import Protocol

from bot.core.clock import Clock
from bot.core.deck import Deck
from bot.core.locales import Locales
from bot.core.models import AnswerResult, Chat, Person, ReviewStats, ShownQuestion
from bot.core.ports import (
    DeliveryStore,
    PeopleStore,
    PostRecord,
    PostStore,
    ReviewStore,
)
from bot.core.questions import Questions
from bot.core.schedule import Schedule, parse_time, parse_zone


class ReviewStorage(ReviewStore, PostStore, PeopleStore, DeliveryStore, Protocol):
    """What Review reads and writes."""


KIND = "review"


class Review:
    def __init__(
        self, questions: Questions, locales: Locales, storage: ReviewStorage, clock: Clock
    ) -> None:
        self.questions = questions
        self.locales = locales
        self.storage = storage
        self.clock = clock

    async def deck(self, person_key: str) -> Deck:
        deck = Deck()
        for answer in await self.storage.review_answers(person_key):
            deck.apply(answer)
        return deck

    def in_catalog(self, card: tuple[str, str]) -> bool:
        quiz = self.questions.catalog.quizzes.get(card[0])
        return quiz is not None and any(q.id == card[1] for q in quiz.questions)

    async def due(self, person_key: str) -> list[tuple[str, str]]:
        """Due cards whose question is still in the catalog."""
        return [key for key in (await self.deck(person_key)).due(self.clock.now())
                if self.in_catalog(key)]

    async def next_due(self, person: Person) -> timedelta | None:
        """How long until the person's next card is due (None: no card is waiting)."""
        now = self.clock.now()
        when = (await self.deck(person.key)).next_due(now, self.in_catalog)
        return None if when is None else when - now

    async def start(self, person: Person, chat: Chat, locale: str) -> ShownQuestion | None:
        """The first due card as the person's own question in `chat`; None if none is due.
        An unanswered review question of theirs there is shown again instead."""
        for post in await self.storage.open_posts(chat.key, kind=KIND):
            if post.owner_key == person.key:
                return self.questions.render(post, locale)
        return await self._next(person, chat, locale)

    async def _next(self, person: Person, chat: Chat, locale: str) -> ShownQuestion | None:
        due = await self.due(person.key)
        if not due:
            return None
        quiz_id, question_id = due[0]
        return await self.questions.post(chat, quiz_id, question_id, locale, kind=KIND,
                                         owner=person)

    async def answered(
        self, post: PostRecord, person: Person, result: AnswerResult
    ) -> AnswerResult:
        """After an accepted answer to a review question: the next due card, if any."""
        if post.kind != KIND or not result.accepted:
            return result
        nxt = await self._next(person, Chat(post.chat_key), result.locale)
        return result if nxt is None else replace(result, next_question=nxt)

    async def stats(self, person: Person) -> ReviewStats:
        deck = await self.deck(person.key)
        return ReviewStats(len(deck.cards), len(deck.due(self.clock.now())), deck.reviews,
                           deck.right)

    # reminders ---------------------------------------------------------------------------
    async def set_reminder(self, person: Person, at: str, tz: str | None = None) -> Schedule:
        reminder = Schedule(chat_key=person.key, at=parse_time(at), tz=parse_zone(tz),
                            updated_at=self.clock.now())
        await self.storage.upsert_person(person.key, person.known_name)
        await self.storage.set_reminder(reminder)
        return reminder

    async def reminder_off(self, person: Person) -> bool:
        return await self.storage.delete_reminder(person.key)

    async def reminder(self, person: Person) -> Schedule | None:
        return await self.storage.get_reminder(person.key)

    async def reminders(self) -> list[Schedule]:
        """Every person's reminder (the scheduler's round)."""
        return await self.storage.reminders()

    async def claim(self, reminder: Schedule) -> tuple[date, int] | None:
        """If today's reminder is due and unclaimed, claim it (once per person and local
        day, by the database): its day and how many cards are due. The claimed day stays
        due (`unsent`) until `sent`; with no card due there is nothing to send, and it is
        done at once. None when there is nothing to do now."""
        now = self.clock.now()
        day = reminder.due_day(now)
        if day is None or not await self.storage.claim_reminder(reminder.chat_key, day, now):
            return None
        return day, await self.due_now(reminder.chat_key, day)

    async def due_now(self, person_key: str, day: date) -> int:
        """How many cards a claimed day's reminder tells of; 0 (and done) if none."""
        due = len(await self.due(person_key))
        if not due:
            await self.sent(person_key, day)
        return due

    async def unsent(self, window: timedelta, grace: timedelta) -> list[tuple[str, date]]:
        """Reminders claimed between `window` and `grace` ago that no platform confirmed (a
        failure, a restart, a process that died between the claim and the send)."""
        now = self.clock.now()
        return await self.storage.unsent_reminders(now - window, now - grace)

    async def sent(self, person_key: str, day: date) -> None:
        await self.storage.mark_reminder_sent(person_key, day, self.clock.now())
