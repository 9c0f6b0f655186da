"""Getting what the core produced onto the platforms: summaries and scheduled questions.

Adapters connect a ChatPort per platform. Every summary goes out through `summary()`, whether
a use case just closed its question or the scheduler found it pending, so the rules live here
once: a chat that is gone loses its schedule and its summaries are given up; a transient
failure is retried with backoff; a summary is never delivered twice by this process.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Protocol

from bot.core.clock import Clock
from bot.core.item_analysis import Charts
from bot.core.models import PostSummary, ShownQuestion
from bot.core.ports import (
    ChatGone,
    ChatPort,
    ClosingStore,
    LeaseStore,
    PostStore,
    ScheduleStore,
    TryLater,
)
from bot.core.questions import Questions


class DeliveryStorage(ClosingStore, LeaseStore, PostStore, ScheduleStore, Protocol):
    """What Delivery reads and writes."""


log = logging.getLogger(__name__)

# A summary the platform refused is offered again for this long, then given up.
SUMMARY_WINDOW = timedelta(hours=6)
# Whoever closed a question delivers its summary at once; another process (on the same
# database) offers it again only after this long, so the two do not both deliver it.
SUMMARY_GRACE = timedelta(seconds=30)
FIRST_RETRY = timedelta(seconds=30)
MAX_BACKOFF = timedelta(hours=1)
RECENT = 4096  # post ids whose summary this process delivered lately (bounded, oldest out)
# Every process on the database may offer a summary; the one holding its lease delivers it.
# Kept after a delivery (a process that listed it a moment earlier must not take it again),
# released after a failure so that the next try need not wait for it.
SUMMARY_LEASE = timedelta(minutes=10)


def backoff(failures: int, first: timedelta = FIRST_RETRY) -> timedelta:
    doublings: int = min(max(0, failures - 1), 16)
    return min(MAX_BACKOFF, first * (1 << doublings))


class Delivery:
    def __init__(
        self, questions: Questions, storage: DeliveryStorage, clock: Clock, holder: str,
        charts: Charts | None = None, modes: Callable[[str], Awaitable[str | None]] | None = None,
    ) -> None:
        """`holder`: this process's name in the database's leases; `charts` draws a chart
        on the summaries of chats that asked for one (never failing the summary); `modes`
        tells how a chat shows the questions the core posts by itself (Rounds.mode)."""
        self.questions = questions
        self.charts = charts
        self.modes = modes
        self.storage = storage
        self.clock = clock
        self.holder = holder
        self._ports: dict[str, ChatPort] = {}
        self._busy: set[int] = set()  # summaries being delivered right now
        self._recent: OrderedDict[int, None] = OrderedDict()
        self._retry: dict[int, tuple[int, datetime]] = {}  # post -> (failures, not before)

    # ports ---------------------------------------------------------------------------------
    def connect(self, port: ChatPort) -> None:
        self._ports[port.prefix] = port

    def disconnect(self, port: ChatPort) -> None:
        if self._ports.get(port.prefix) is port:
            del self._ports[port.prefix]

    def port_for(self, chat_key: str) -> ChatPort | None:
        """The connected platform serving this chat; None if it runs in no process here."""
        return next((p for prefix, p in self._ports.items() if chat_key.startswith(prefix)),
                    None)

    # summaries -------------------------------------------------------------------------------
    async def summaries(self, summaries: Iterable[PostSummary]) -> None:
        """Deliver several; different chats in parallel, so one chat's flood wait does not
        hold up the others, and in order within a chat."""
        by_chat: dict[str, list[PostSummary]] = {}
        for summary in summaries:
            by_chat.setdefault(summary.chat_key, []).append(summary)

        async def in_order(items: list[PostSummary]) -> None:
            for item in items:
                await self.summary(item)

        await asyncio.gather(*(in_order(items) for items in by_chat.values()))

    async def summary(self, summary: PostSummary) -> bool:
        """Close the question on its platform with its summary; True once delivered."""
        post_id = summary.post_id
        port = self.port_for(summary.chat_key)
        if port is None or post_id in self._busy or post_id in self._recent:
            return False
        failures, not_before = self._retry.get(post_id, (0, self.clock.now()))
        if self.clock.now() < not_before:
            return False
        self._busy.add(post_id)  # before any await: this process tries it once at a time
        lease = f"summary:{post_id}"
        try:
            now = self.clock.now()
            if not await self.storage.take_lease(lease, self.holder, now + SUMMARY_LEASE, now):
                return False  # another process is delivering it, or just did
            try:
                if self.charts is not None:
                    summary = await self.charts.on_summary(summary)
                await port.close_question(summary)
            except ChatGone as exc:
                log.warning("gave up the summary of post %s: %s is gone (%s)",
                            post_id, summary.chat_key, exc)
                await self.chat_gone(summary.chat_key)
            except Exception as exc:
                await self.storage.release_lease(lease, self.holder)
                delay = self._failed(post_id, failures, exc)
                log.warning("summary of post %s in %s not delivered (%s); next try in %s",
                            post_id, summary.chat_key, exc or type(exc).__name__, delay,
                            exc_info=not isinstance(exc, TryLater) and failures == 0)
                return False
        finally:
            self._busy.discard(post_id)
        self._retry.pop(post_id, None)
        self._recent[post_id] = None
        if len(self._recent) > RECENT:
            self._recent.popitem(last=False)
        await self.questions.summary_posted(post_id)
        return True

    async def pending(self) -> None:
        """Summaries closed but never confirmed by their platform (a failure, a restart, a
        process that died while delivering), from SUMMARY_GRACE after they closed."""
        due = [s for s in await self.questions.unposted_summaries(SUMMARY_WINDOW, SUMMARY_GRACE)
               if self.port_for(s.chat_key) is not None]
        await self.summaries(due)
        live, now = {s.post_id for s in due}, self.clock.now()
        # a backoff still running is kept (its summary may be inside SUMMARY_GRACE, so not
        # offered yet); one that ran out for a summary no longer due is forgotten
        for post_id in [p for p, (_, not_before) in self._retry.items()
                        if p not in live and not_before <= now]:
            del self._retry[post_id]  # delivered elsewhere, or out of the window

    def _failed(self, post_id: int, failures: int, exc: Exception) -> timedelta:
        delay = backoff(failures + 1)
        if isinstance(exc, TryLater) and exc.retry_after is not None:
            delay = max(delay, exc.retry_after)
        self._retry[post_id] = (failures + 1, self.clock.now() + delay)
        return delay

    # questions the core posts by itself ------------------------------------------------------
    async def question(self, question: ShownQuestion) -> bool:
        """Send a question the core created (a daily question). False if the chat is gone
        (its schedule is dropped); other failures raise for the caller to retry."""
        port = self.port_for(question.chat_key)
        if port is None:
            raise TryLater(f"no platform connected for {question.chat_key}")
        if self.modes is not None:
            question = replace(question, mode=await self.modes(question.chat_key))
        try:
            await port.send_question(question)
        except ChatGone as exc:
            log.warning("cannot post in %s any more (%s); its daily question is turned off",
                        question.chat_key, exc)
            await self.chat_gone(question.chat_key)
            return False
        return True

    async def chat_gone(self, chat_key: str) -> None:
        """The bot can never post there again: drop the schedule, close what is open there
        quietly and give up its summaries, so nothing retries for ever."""
        await self.storage.delete_schedule(chat_key)
        for post in await self.storage.open_posts(chat_key):
            await self.questions.close(post.id, quiet=True)
        now = self.clock.now()
        for post in await self.storage.unposted_summaries(now - SUMMARY_WINDOW, now):
            if post.chat_key == chat_key:
                await self.questions.summary_posted(post.id)
