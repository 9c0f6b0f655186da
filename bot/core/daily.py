"""Daily questions: a chat's schedule, who may change it, and the once-per-local-day claim."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Protocol

from bot.core.clock import Clock
from bot.core.errors import ScheduleError, UnknownQuiz, may_not_change_daily
from bot.core.locales import Locales
from bot.core.models import Chat, Person, PostSummary, ScheduleStatus, ShownQuestion
from bot.core.ports import ChatStore, DailyStore, NewPost, PostStore, ScheduleStore
from bot.core.questions import Questions, option_order
from bot.core.schedule import Schedule, parse_time, parse_zone
from bot.i18n import _


class DailyStorage(ScheduleStore, DailyStore, PostStore, ChatStore, Protocol):
    """What Daily reads and writes."""


MAX_OPEN_MINUTES = 24 * 60


class Daily:
    def __init__(
        self, questions: Questions, locales: Locales, storage: DailyStorage, clock: Clock,
        rng: random.Random,
    ) -> None:
        self.questions = questions
        self.locales = locales
        self.storage = storage
        self.clock = clock
        self.rng = rng

    async def set(
        self,
        chat: Chat,
        at: str,
        tz: str | None = None,
        selector: str | None = None,
        *,
        open_minutes: int | None = None,
        by: Person | None = None,
        allowed: bool,
    ) -> ScheduleStatus:
        """Set the chat's daily question. `allowed`: the caller manages the chat (the
        platform says who: admins, Manage Server; in a private chat, its person). Everything
        is checked first; a refusal or a bad time, zone or quiz changes nothing."""
        if not allowed:
            raise may_not_change_daily()
        when, zone = parse_time(at), parse_zone(tz)
        if selector:
            self.questions.select(selector)  # raises UnknownQuiz
        if open_minutes is not None and not 1 <= open_minutes <= MAX_OPEN_MINUTES:
            raise ScheduleError(_("The open time must be between 1 minute and 24 hours."))
        schedule = Schedule(
            chat_key=chat.key, at=when, tz=zone,
            selector=selector.strip().lower() if selector else None,
            open_minutes=open_minutes, updated_at=self.clock.now(),
        )
        await self.storage.upsert_chat(chat.key, chat.title, chat.platform_locale)
        await self.storage.set_schedule(schedule, by.key if by else None)
        status = await self.status(chat)
        assert status is not None
        return status

    async def turn_off(self, chat: Chat, *, allowed: bool) -> tuple[bool, list[PostSummary]]:
        """Remove the schedule; its open question is closed now (nothing else ever would),
        with its summary to deliver. (False, []) if the chat had no schedule."""
        if not allowed:
            raise may_not_change_daily()
        if not await self.storage.delete_schedule(chat.key):
            return False, []
        return True, await self.questions.close_open(chat.key, kind="daily")

    async def status(self, chat: Chat) -> ScheduleStatus | None:
        schedule = await self.storage.get_schedule(chat.key)
        if schedule is None:
            return None
        now = self.clock.now()
        posted = await self.storage.daily_day_of(chat.key, schedule.local_date(now))
        moment = schedule.next_moment(now, posted is not None)
        return ScheduleStatus(schedule, moment.astimezone(schedule.zone))

    async def schedules(self) -> list[Schedule]:
        return await self.storage.schedules()

    async def claim(self, schedule: Schedule) -> tuple[ShownQuestion, list[PostSummary]] | None:
        """If today's question of `schedule` is due and unclaimed, create it (exactly once per
        local day, enforced by the database) and close the previous daily question."""
        now = self.clock.now()
        day = schedule.due_day(now)
        if day is None or await self.storage.daily_day_of(schedule.chat_key, day) is not None:
            return None
        chat = Chat(schedule.chat_key)
        locale = await self.locales.for_chat(chat)
        try:
            quiz_id, question_id = await self.questions.choose(
                chat, schedule.selector, None, daily=True
            )
        except UnknownQuiz:  # the pack was removed since; fall back to every quiz
            quiz_id, question_id = await self.questions.choose(chat, None, None, daily=True)
        question = self.questions.catalog.question(quiz_id, question_id)
        open_for = timedelta(minutes=schedule.open_minutes) if schedule.open_minutes else None
        post = await self.storage.claim_daily(
            schedule.chat_key,
            day,
            NewPost(
                chat.key, quiz_id, question_id, option_order(question, self.rng), locale, now,
                closes_at=now + open_for if open_for else None, kind="daily",
            ),
            now,
        )
        if post is None:
            return None  # another process claimed the day first
        summaries = []
        for old in await self.storage.open_posts(chat.key, kind="daily"):
            if old.id != post.id and (summary := await self.questions.close(old.id)):
                summaries.append(summary)
        return self.questions.render(post, locale), summaries

    async def published(self, post_id: int) -> None:
        await self.storage.mark_daily_published(post_id, self.clock.now())

    async def unpublished(self, grace: timedelta) -> list[ShownQuestion]:
        """Daily questions claimed more than `grace` ago that never reached their chat."""
        posts = await self.storage.unpublished_dailies(self.clock.now() - grace)
        return [self.questions.render(p, p.locale) for p in posts]
