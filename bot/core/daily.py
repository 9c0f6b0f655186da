"""Daily questions: a chat's schedule and the exactly-once-per-local-day claim."""

from __future__ import annotations

from datetime import timedelta

from bot.content.schema import DEFAULT_LOCALE
from bot.core import selection
from bot.core.models import (
    Chat,
    Person,
    PostSummary,
    ScheduleStatus,
    ShownQuestion,
    UnknownQuiz,
)
from bot.core.posting import Posting
from bot.core.schedule import (
    Schedule,
    ScheduleError,
    parse_time,
    parse_zone,
)
from bot.i18n import _
from bot.storage.base import NewPost


class DailyQuestions(Posting):
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
            raise ScheduleError(_("The open time must be between 1 minute and 24 hours."))
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
