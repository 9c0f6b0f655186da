"""Getting what the core produced onto the platforms: question summaries, round summaries,
review reminders and scheduled questions.

Adapters connect a ChatPort per platform. Every summary and reminder goes out through
`_deliver`, whether a use case just produced it or the scheduler found it pending, so the
rules live here once, for every process on the database:
- it is stored as due before it is sent (a closed post, a finished round, a claimed day);
- it is delivered under a lease (`leases`), so two processes never send it at once;
- it is marked delivered once the platform confirmed it (a send that may have arrived
  although its reply was lost counts as confirmed: the adapter says so), and a process that
  died before that leaves it due: another one (or this one, restarted) delivers it;
- a transient failure is retried with backoff; a chat that is gone gives it up (and loses
  its schedule);
- each send is stored as started before it goes, and forgotten when the platform refused it
  (a summary, sent in steps by its platform: its chart, then its text, each stored by the
  adapter through `step_started`); a later try skips what was started: it went out, or may
  have, before a process died. So a crash while a message is in flight may lose it (Telegram
  may not have taken it) but never sends it twice, as a send that timed out is not sent again.
- a process restarted under the same name (QUIZBOT_INSTANCE: the same `holder`) takes up
  the leases its predecessor held at once; another process waits for them to run out.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Protocol, TypeVar

from bot.core.chat_analysis import Charts
from bot.core.clock import Clock
from bot.core.models import PostSummary, ShownQuestion
from bot.core.ports import (
    ChatGone,
    ChatPort,
    ClosingStore,
    DeliveryStore,
    LeaseStore,
    PostStore,
    RoundSummary,
    ScheduleStore,
    TryLater,
)
from bot.core.questions import Questions


class DeliveryStorage(ClosingStore, LeaseStore, PostStore, ScheduleStore, DeliveryStore,
                      Protocol):
    """What Delivery reads and writes."""


log = logging.getLogger(__name__)

# A summary the platform refused is offered again for this long, then given up.
SUMMARY_WINDOW = timedelta(hours=6)
# A reminder is about today's cards: one not delivered within this long is given up.
REMINDER_WINDOW = timedelta(hours=12)
# Whoever produced a delivery makes it at once; another process (on the same database)
# offers it again only after this long, so the two do not both deliver it.
SUMMARY_GRACE = timedelta(seconds=30)
# A question its asker created and never started to send (it died in between) is sent by
# another process after this long: a live asker stores its send as started within moments.
QUESTION_GRACE = timedelta(seconds=5)
FIRST_RETRY = timedelta(seconds=30)
MAX_BACKOFF = timedelta(hours=1)
RECENT = 4096  # deliveries this process made lately (bounded, oldest out)
# Every process on the database may offer a delivery; the one holding its lease makes it.
# Kept after a delivery (a process that listed it a moment earlier must not take it again),
# released after a failure so that the next try need not wait for it.
SUMMARY_LEASE = timedelta(minutes=10)
SENT_STEP = "sent"  # a one-message delivery's send started (it went out, or may have)
# Deliveries one loop makes at once. Each waits for its platform's pacing (telegram/rate.py,
# discord/rate.py), so reminders or summaries due in thousands of chats at one minute go at
# the platform's rate instead of one round trip after another; the bound keeps the waiting
# sends (and their memory) few, as the daily fan-out's (scheduler.FANOUT) does.
AT_ONCE = 100

T = TypeVar("T")


async def fan_out(items: Iterable[T], one: Callable[[T], Awaitable[int]], what: str,
                  name: Callable[[T], object] = lambda item: item) -> int:
    """`one` for every item, AT_ONCE at a time; the sum of what they return. Each fails alone
    (logged with `what` and the item's `name`), so one broken chat holds up no other."""
    gate = asyncio.Semaphore(AT_ONCE)

    async def alone(item: T) -> int:
        async with gate:
            try:
                return await one(item)
            except Exception:
                log.exception("%s failed for %s", what, name(item))
                return 0

    return sum(await asyncio.gather(*(alone(item) for item in items)))


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
        self._busy: set[str] = set()  # deliveries being made right now
        self._draining = False  # stopping: none starts (Scheduler.stop)
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._retry: dict[str, tuple[int, datetime]] = {}  # name -> (failures, not before)

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

    # question summaries ----------------------------------------------------------------------
    async def summaries(self, summaries: Iterable[PostSummary]) -> None:
        """Deliver several; different chats in parallel, so one chat's flood wait does not
        hold up the others, and in order within a chat."""
        by_chat: dict[str, list[PostSummary]] = {}
        for summary in summaries:
            by_chat.setdefault(summary.chat_key, []).append(summary)

        async def in_order(items: list[PostSummary]) -> int:
            return sum([await self.summary(item) for item in items])

        await fan_out(by_chat.values(), in_order, "question summaries",
                      lambda items: items[0].chat_key)

    async def summary(self, summary: PostSummary) -> bool:
        """Close the question on its platform with its summary; True once delivered. The
        platform stores the steps it sends (step_started): a retry skips those."""
        name = summary_name(summary.post_id)

        async def send(port: ChatPort) -> None:
            nonlocal summary
            if self.charts is not None:
                summary = await self.charts.on_summary(summary)
            summary = replace(summary, done=await self.storage.delivery_steps(name))
            await port.close_question(summary)

        return await self._deliver(name, summary.chat_key, send,
                                   lambda: self.questions.summary_posted(summary.post_id),
                                   in_steps=True)

    async def pending(self) -> None:
        """Summaries closed but never confirmed by their platform (a failure, a restart, a
        process that died while delivering), from SUMMARY_GRACE after they closed."""
        due = [s for s in await self.questions.unposted_summaries(SUMMARY_WINDOW, SUMMARY_GRACE)
               if self.port_for(s.chat_key) is not None]
        await self.summaries(due)
        self._settle("summary:", {summary_name(s.post_id) for s in due})

    async def step_started(self, post_id: int, step: str) -> None:
        """A step of a summary's delivery (models.CHART_STEP, TEXT_STEP) is being sent."""
        await self.storage.delivery_step_done(summary_name(post_id), step, self.clock.now())

    async def step_refused(self, post_id: int, step: str) -> None:
        await self._refused(summary_name(post_id), step)

    async def _refused(self, name: str, step: str) -> None:
        """The platform refused the step: the next try sends it. If even that cannot be
        stored, the next try takes it as sent (lost, never doubled)."""
        try:
            await self.storage.forget_delivery_step(name, step)
        except Exception as exc:
            log.warning("%s of %s may not be sent again (%s)", step, name, exc)

    async def forget_steps(self) -> int:
        """Steps of deliveries long out of their window."""
        return await self.storage.forget_delivery_steps(self.clock.now() - 2 * SUMMARY_WINDOW)

    # round summaries and reminders -----------------------------------------------------------
    async def round_summaries(self, summaries: Iterable[RoundSummary]) -> None:
        """Deliver several: different chats at once (fan_out), in order within a chat."""
        by_chat: dict[str, list[RoundSummary]] = {}
        for summary in summaries:
            by_chat.setdefault(summary.chat_key, []).append(summary)

        async def in_order(items: list[RoundSummary]) -> int:
            return sum([await self.round_summary(item) for item in items])

        await fan_out(by_chat.values(), in_order, "round summaries",
                      lambda items: items[0].chat_key)

    async def round_summary(self, summary: RoundSummary) -> bool:
        """Show a round's summary in its chat; True once delivered."""
        async def posted() -> None:
            await self.storage.mark_round_summary_posted(summary.round_id, self.clock.now())

        return await self._deliver(f"round:{summary.round_id}", summary.chat_key,
                                   lambda port: port.round_over(summary), posted)

    def settle_rounds(self, due: Iterable[RoundSummary]) -> None:
        """After offering the pending round summaries `due`: forget the backoff of others."""
        self._settle("round:", {f"round:{s.round_id}" for s in due})

    async def reminder(self, person_key: str, day: date, text: str) -> bool:
        """Send a person their reminder of `day` privately; True once delivered."""
        async def sent() -> None:
            await self.storage.mark_reminder_sent(person_key, day, self.clock.now())

        return await self._deliver(reminder_name(person_key, day), person_key,
                                   lambda port: port.send_private(person_key, text), sent)

    def settle_reminders(self, due: Iterable[tuple[str, date]]) -> None:
        self._settle("reminder:", {reminder_name(person, day) for person, day in due})

    # assignments' reminders and summaries (core/assignments.py) ------------------------------
    async def once(self, name: str, chat_key: str, send: Callable[[ChatPort], Awaitable[None]],
                   delivered: Callable[[], Awaitable[None]]) -> bool:
        """A one-message delivery `name` its caller claimed in the database, by the rules
        above; True once delivered."""
        return await self._deliver(name, chat_key, send, delivered)

    def settle(self, kind: str, due: Iterable[str]) -> None:
        """After offering the pending deliveries named `due` (`kind`: their names' start)."""
        self._settle(kind, set(due))

    # the one way anything is delivered -------------------------------------------------------
    async def _deliver(
        self, name: str, chat_key: str, send: Callable[[ChatPort], Awaitable[None]],
        delivered: Callable[[], Awaitable[None]], *, in_steps: bool = False,
    ) -> bool:
        """`send` through the chat's platform under the lease `name`, then `delivered` (also
        when the chat is gone: given up). False if not delivered now (not this process's
        turn, another process holds it, a backoff running, or a failure: tried again).

        A send is stored as started before it goes (SENT_STEP; `in_steps`: the platform
        stores each of its steps itself) and forgotten when the platform refused it. Found
        started by a later try, it went out, or may have, in a process that died before the
        platform's reply was stored: it is not sent again (as a send that timed out is not),
        so a crash can lose a message in flight but never doubles one."""
        port = self.port_for(chat_key)
        if port is None or self._draining or name in self._busy or name in self._recent:
            return False
        failures, not_before = self._retry.get(name, (0, self.clock.now()))
        if self.clock.now() < not_before:
            return False
        self._busy.add(name)  # before any await: this process tries it once at a time
        try:
            now = self.clock.now()
            if not await self.storage.take_lease(name, self.holder, now + SUMMARY_LEASE, now):
                return False  # another process is delivering it, or just did
            if not in_steps and SENT_STEP in await self.storage.delivery_steps(name):
                log.warning("%s in %s was being sent by a process that died; it may be "
                            "there, and is not sent again", name, chat_key)
            else:
                if not in_steps:
                    await self.storage.delivery_step_done(name, SENT_STEP, now)
                try:
                    await send(port)
                except ChatGone as exc:
                    log.warning("gave up %s: %s is gone (%s)", name, chat_key, exc)
                    await self.chat_gone(chat_key)
                except Exception as exc:
                    if not in_steps:
                        await self._refused(name, SENT_STEP)
                    await self.storage.release_lease(name, self.holder)
                    delay = self._failed(name, failures, exc)
                    log.warning("%s in %s not delivered (%s); next try in %s",
                                name, chat_key, exc or type(exc).__name__, delay,
                                exc_info=not isinstance(exc, TryLater) and failures == 0)
                    return False
        finally:
            self._busy.discard(name)
        self._retry.pop(name, None)
        self._recent[name] = None
        if len(self._recent) > RECENT:
            self._recent.popitem(last=False)
        await delivered()
        return True

    def drain(self) -> None:
        """The process is stopping: no delivery starts from now on (those under way finish).
        Each one not started stays due, and the next process delivers it."""
        self._draining = True

    def resume(self) -> None:
        self._draining = False

    def _failed(self, name: str, failures: int, exc: Exception) -> timedelta:
        delay = backoff(failures + 1)
        if isinstance(exc, TryLater) and exc.retry_after is not None:
            delay = max(delay, exc.retry_after)
        self._retry[name] = (failures + 1, self.clock.now() + delay)
        return delay

    def _settle(self, kind: str, live: set[str]) -> None:
        """A backoff still running is kept (its delivery may be inside SUMMARY_GRACE, so not
        offered yet); one that ran out for a delivery of `kind` no longer due is forgotten
        (delivered elsewhere, or out of its window)."""
        now = self.clock.now()
        for name in [n for n, (_, not_before) in self._retry.items()
                     if n.startswith(kind) and n not in live and not_before <= now]:
            del self._retry[name]

    # questions the core posts by itself ------------------------------------------------------
    async def question_sending(self, post_id: int) -> None:
        """A question's send is about to start (the adapter says so): from now on it may be
        in its chat, and is never sent again by `unsent_question`."""
        await self.storage.delivery_step_done(question_name(post_id), SENT_STEP,
                                              self.clock.now())

    async def unsent_question(self, question: ShownQuestion) -> bool:
        """Send a question whose process died after creating it and before its send started
        (Rounds.unsent), under its lease so that one process sends it."""
        async def send(port: ChatPort) -> None:
            shown = question
            if self.modes is not None:
                shown = replace(question, mode=await self.modes(question.chat_key))
            await port.send_question(shown)

        async def nothing() -> None:
            """Its references, bound by the platform, mark it sent."""

        return await self._deliver(question_name(question.post_id), question.chat_key, send,
                                   nothing, in_steps=True)

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


def summary_name(post_id: int) -> str:
    return f"summary:{post_id}"


def question_name(post_id: int) -> str:
    return f"question:{post_id}"


def reminder_name(person_key: str, day: date) -> str:
    return f"reminder:{person_key}:{day.isoformat()}"
