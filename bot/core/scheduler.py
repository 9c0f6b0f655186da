"""The daily scheduler: one loop in the core posting due questions through the adapters."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.core.ports import Publisher
from bot.core.service import QuizService

log = logging.getLogger(__name__)

# A claimed day whose question has not reached its chat after this long is posted again:
# the process that claimed it died between the database and the platform.
REPUBLISH_AFTER = timedelta(minutes=2)
MAX_BACKOFF = timedelta(hours=1)


class DailyScheduler:
    def __init__(
        self, service: QuizService, publishers: Sequence[Publisher], interval: float = 20.0
    ) -> None:
        self.service = service
        self.publishers = list(publishers)
        self.interval = interval
        self._task: asyncio.Task[None] | None = None
        self._failures: dict[int, tuple[int, datetime]] = {}  # post id -> (failures, retry at)

    def _publisher(self, chat_key: str) -> Publisher | None:
        return next((p for p in self.publishers if chat_key.startswith(p.prefix)), None)

    async def tick(self) -> int:
        """Post every due daily question; returns how many were posted."""
        posted = 0
        for schedule in await self.service.schedules():
            publisher = self._publisher(schedule.chat_key)
            if publisher is None:
                continue  # that platform is not running in this process
            try:
                claimed = await self.service.claim_daily(schedule)
                if claimed is None:
                    continue
                question, summaries = claimed
                for summary in summaries:
                    await publisher.post_summary(summary)
                await publisher.post_question(question)
                await self.service.daily_published(question.post_id)
                posted += 1
            except Exception:
                log.exception("daily question for %s failed", schedule.chat_key)
        now = self.service.clock.now()
        for question in await self.service.unpublished_dailies(REPUBLISH_AFTER):
            publisher = self._publisher(question.chat_key)
            failures, not_before = self._failures.get(question.post_id, (0, now))
            if publisher is None or now < not_before:
                continue
            try:
                await publisher.post_question(question)
                await self.service.daily_published(question.post_id)
                self._failures.pop(question.post_id, None)
                posted += 1
            except Exception:
                # e.g. the bot lost access to the chat: back off instead of failing every tick
                delay = min(MAX_BACKOFF, REPUBLISH_AFTER * 2**failures)
                self._failures[question.post_id] = (failures + 1, now + delay)
                log.log(
                    logging.ERROR if failures == 0 else logging.WARNING,
                    "re-posting daily question %s to %s failed (%d times); next try in %s",
                    question.post_id, question.chat_key, failures + 1, delay,
                    exc_info=failures == 0,
                )
        return posted

    async def run(self) -> None:
        while True:
            await self.tick()
            await asyncio.sleep(self.interval)

    async def start(self) -> None:
        self._task = asyncio.create_task(self.run(), name="daily-scheduler")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
