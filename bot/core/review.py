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

Each person's cards are scheduled with their own FSRS parameters once they have enough history
(bot/core/fsrs_fit.py: fitted from their answers, in a child process, and kept only where they
predict the person's latest reviews better than the defaults), with the defaults until then.
`refit_due` fits the people due (enough reviews, never fitted, or REFIT_AFTER more reviews and
REFIT_GAP since the last fit), one at a time; the scheduler's tick starts it in the background
(not an answer: the hot path stays free of it, and the tick reaches someone who only answers in
groups too): one round at a time, at most every REFIT_CHECK in a process, and in one process at
a time (REFIT_LEASE); the process's stop cancels a round in progress. Storing a fit replays
the person's kept cards with it (bot/storage/fsrs_params.py), so the dashboard's cards stay a
replay.

/review posts the due cards one by one as the person's own questions (kind "review") in the
chat it was asked in (the adapters run it privately); each answer is stored like any other,
so it moves its card, and its result brings the next due card. /remind sets one private
message a day (a Schedule whose chat_key is the person's key), sent by the core scheduler
when cards are due, claimed once per person and local date in the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Protocol

from bot.core import fsrs_fit
from bot.core.clock import Clock
from bot.core.deck import FSRS, Deck, scheduler
from bot.core.locales import Locales
from bot.core.models import AnswerResult, Chat, Person, ReviewStats, ShownQuestion
from bot.core.ports import (
    DeliveryStore,
    LeaseStore,
    PeopleStore,
    PostRecord,
    PostStore,
    ReviewAnswer,
    ReviewFit,
    ReviewFitStore,
    ReviewStore,
)
from bot.core.questions import Questions
from bot.core.schedule import Schedule, parse_time, parse_zone


class ReviewStorage(ReviewStore, ReviewFitStore, PostStore, PeopleStore, DeliveryStore,
                    LeaseStore, Protocol):
    """What Review reads and writes."""


KIND = "review"
REFIT_GAP = timedelta(days=1)  # a person is fitted again at most once a day
REFIT_CHECK = timedelta(minutes=10)  # how often a process looks for people due a fit
REFIT_PEOPLE = 4  # people fitted in one round, one after the other
# One process at a time looks for fits and makes them (so the card table is scanned once per
# REFIT_CHECK whatever the processes, and no person is fitted twice at once): it holds this
# lease for a round's longest time or REFIT_CHECK, whichever is longer.
REFIT_LEASE = "review-refits"
REFIT_HOLD = max(REFIT_CHECK, timedelta(seconds=REFIT_PEOPLE * fsrs_fit.CHILD_SECONDS + 60))
Fitter = Callable[[Sequence[ReviewAnswer]], Awaitable[ReviewFit]]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Tuning:
    """How a person's review is tuned, for the dashboard: the retention the scheduler aims
    at, and the mean predicted recall of their cards now with the default parameters and
    with their fitted ones (None: not fitted, or no card)."""

    target: float
    reviews: int  # answers to a card seen before
    fit: ReviewFit | None  # the last fit (its parameters None: the defaults stay)
    fitted_at: datetime | None
    default_retention: float | None
    fitted_retention: float | None

    @property
    def fitted(self) -> bool:
        return self.fit is not None and self.fit.parameters is not None


class Review:
    def __init__(
        self, questions: Questions, locales: Locales, storage: ReviewStorage, clock: Clock,
        fitter: Fitter = fsrs_fit.fit_in_child,
    ) -> None:
        self.questions = questions
        self.locales = locales
        self.storage = storage
        self.clock = clock
        self.fitter = fitter
        self._refits: asyncio.Task[int] | None = None
        self._checked: datetime | None = None  # when this process last looked for fits
        self._holder = f"refits:{uuid.uuid4().hex}"  # this process's name on REFIT_LEASE

    async def deck(self, person_key: str) -> Deck:
        """The person's cards, scheduled with their parameters (the defaults until fitted)."""
        deck = Deck(scheduler(await self.storage.person_parameters(person_key)))
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

    # parameters fitted to each person -----------------------------------------------------
    async def refit(self, person_key: str) -> ReviewFit:
        """Fit the person's parameters from their answers now and store the fit (a fit that
        failed or ran out of time is stored as none: the defaults, until the next is due)."""
        answers = await self.storage.review_answers(person_key)
        try:
            fit = await self.fitter(answers)
        except Exception as error:  # a bad fit keeps the defaults, logged
            log.warning("FSRS fit of %s failed (%d answers): %s", person_key, len(answers),
                        error)
            fit = ReviewFit(None, fsrs_fit.reviews_and_cards(answers)[0], 0)
        await self.storage.save_fit(person_key, fit, self.clock.now())
        log.info("FSRS fit of %s: %s on %d reviews", person_key,
                 "fitted" if fit.parameters is not None else "defaults kept", fit.reviews)
        return fit

    async def refit_due(self, limit: int = REFIT_PEOPLE) -> int:
        """Fit up to `limit` people due a fit, one after the other; how many."""
        people = await self.storage.fits_due(
            fsrs_fit.MIN_REVIEWS, fsrs_fit.MIN_CARDS, fsrs_fit.REFIT_AFTER,
            self.clock.now() - REFIT_GAP, limit)
        for person in people:
            await self.refit(person)
        return len(people)

    def refit_soon(self) -> None:
        """Start `refit_due` in the background unless it runs, or ran REFIT_CHECK ago."""
        now = self.clock.now()
        if (self._refits is not None and not self._refits.done()) or (
                self._checked is not None and now - self._checked < REFIT_CHECK):
            return
        self._checked = now
        self._refits = asyncio.get_running_loop().create_task(self._refit_round())

    async def stop_refits(self) -> None:
        """Cancel a round in progress (the process stops; its fit's child is killed): the
        people it did not reach are due again at the next start."""
        task, self._refits = self._refits, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _refit_round(self) -> int:
        try:
            now = self.clock.now()
            if not await self.storage.take_lease(REFIT_LEASE, self._holder, now + REFIT_HOLD,
                                                 now):
                return 0  # another process's round
            return await self.refit_due()
        except Exception as exc:
            # a warning, not an error: nobody's review waits for it (the defaults or the last
            # fit stay), the next round tries again, and a store closed under a round that
            # was started before a stop ends it this way too
            log.warning("FSRS refit round failed (%s); the next round tries again", exc)
            return 0

    async def tuning(self, person_key: str, keep: Callable[[tuple[str, str]], bool]
                     ) -> Tuning:
        """The person's tuning, over the cards `keep` accepts (a chat's, on its dashboard)."""
        answers = await self.storage.review_answers(person_key)
        stored = await self.storage.review_fit(person_key)
        fit, when = (None, None) if stored is None else stored
        now = self.clock.now()
        default = Deck()
        for answer in answers:
            default.apply(answer)
        fitted = None
        if fit is not None and fit.parameters is not None:
            deck = Deck(scheduler(fit.parameters))
            for answer in answers:
                deck.apply(answer)
            fitted = deck.retention(now, keep)
        return Tuning(FSRS.desired_retention, fsrs_fit.reviews_and_cards(answers)[0], fit,
                      when, default.retention(now, keep), fitted)

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
