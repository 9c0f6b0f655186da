"""The one loop that drives time: daily questions, closing due questions, pending summaries
(of questions and rounds), review reminders (and those left unsent), assignments' reminders
and deadlines, and the background round of review fits (review.py: one at a time, so a tick on
a moved test clock never starts a second while one runs).

Every platform connected to the service (Delivery) is served by this loop; adapters keep no
loops of their own. Tests call `tick()` after moving their clock instead of sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from bot.core import render
from bot.core.delivery import (
    QUESTION_GRACE,
    REMINDER_WINDOW,
    SUMMARY_GRACE,
    SUMMARY_WINDOW,
    backoff,
    fan_out,
)
from bot.core.live import LivePort
from bot.core.models import Chat, Person, ShownQuestion
from bot.core.ports import TryLater
from bot.core.schedule import Schedule
from bot.core.service import QuizService
from bot.i18n import translator

log = logging.getLogger(__name__)

# How often the keys of old commands (core/ports/exactly_once.py CommandKey) and the steps of old
# deliveries (delivery.py) are pruned.
PRUNE_EVERY = timedelta(hours=1)
# A claimed day whose question has not reached its chat after this long is posted again:
# the process that claimed it died between the database and the platform.
REPUBLISH_AFTER = timedelta(minutes=2)
# Daily questions sent at once (each waits for its platform's pacing: rate.py on Telegram);
# each is claimed only when its turn comes, so it goes within seconds of its claim.
FANOUT = 100
# Seconds a fan-out holds the tick at most: the rest goes on while the next ticks run (a
# tick's end is the scheduler's heartbeat, bot/health.py, which must not go stale while the
# daily questions of thousands of chats go at 30 a second).
FANOUT_WAIT = 30.0


@dataclass(frozen=True, slots=True)
class Tick:
    posted: int = 0  # daily questions posted (first tries and re-posts)
    closed: int = 0  # questions closed because their time was up
    asked: int = 0  # round questions asked after the previous one closed
    reminded: int = 0  # review reminders sent (people with cards due)


class Overrun:
    """A fan-out that may outlast a tick (thousands of chats at the platform's rate): started
    by one tick, it goes on in the background, and each tick waits for it up to FANOUT_WAIT
    before moving on to the rest of its round (live countdowns, rounds), so one slow fan-out
    stalls nothing else. No second one starts while it runs; its count goes to the tick that
    sees it end."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._task: asyncio.Task[int] | None = None

    async def run(self, start: Callable[[], Coroutine[Any, Any, int]]) -> int:
        if self._task is None:
            self._task = asyncio.create_task(start(), name=self.name)
        task = self._task  # ticks that overlap wait for the same one
        done, _ = await asyncio.wait({task}, timeout=FANOUT_WAIT)
        if not done or self._task is not task:  # still going, or an overlapping tick counted it
            return 0
        self._task = None
        return task.result()

    async def finish(self, within: float) -> None:
        """Wait for it up to `within` seconds, then cancel it."""
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=max(0.0, within))
        await self.cancel()

    async def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


class Scheduler:
    def __init__(self, service: QuizService, interval: float = 1.0) -> None:
        self.service = service
        self.interval = interval
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._failures: dict[int, tuple[int, datetime]] = {}  # post id -> (failures, retry at)
        # daily questions the platform said to send again after a wait: post id -> when
        self._soon: dict[int, tuple[ShownQuestion, datetime]] = {}
        self._dailies = Overrun("daily questions")
        self._reminders = Overrun("review reminders")
        self._assignments = Overrun("assignment reminders and summaries")
        # chats whose daily question the fan-out is claiming or sending now
        self._sending: set[str] = set()
        # one per re-post fetching its list: every chat the fan-out marks meanwhile
        self._watches: list[set[str]] = []
        self.on_round: Callable[[], None] | None = None  # after each round that succeeded
        self._reminded: dict[str, date] = {}  # person key -> local day this process claimed
        self._pruned: datetime | None = None  # when this process last pruned command keys

    async def tick(self) -> Tick:
        """One round; each part fails alone (logged), so one broken chat stops nothing."""
        delivery = self.service.delivery
        await self.service.authoring.refresh()  # packs published or withdrawn elsewhere
        closed = await self.service.questions.close_due()
        await delivery.summaries(closed)  # this process closed them: it delivers them now
        asked = await self._advance_rounds()
        await self._live()
        posted = await self._post_dailies() + await self._republish()
        await delivery.pending()  # any refused earlier, or closed by a process that died
        await self._pending_rounds()
        reminded = await self._reminders.run(self._remind)
        await self._assignments.run(self._assignment_round)
        self.service.spaced.refit_soon()  # in the background, one round at a time (review.py)
        await self._prune()
        return Tick(posted=posted, closed=len(closed), asked=asked, reminded=reminded)

    async def _advance_rounds(self) -> int:
        """Rounds whose question closed: the next question, or the round's summary."""
        delivery = self.service.delivery
        try:
            questions, ended = await self.service.rounds.advance(
                lambda chat_key: delivery.port_for(chat_key) is not None
            )
        except Exception:
            log.exception("advancing rounds failed")
            return 0
        asked = 0
        for question in questions:
            try:
                if await delivery.question(question):
                    asked += 1
                else:  # the chat is gone: its round ends with nothing more to show
                    await self.service.rounds.end(question.chat_key)
            except Exception:  # it closes at its time, and the round goes on
                log.exception("round question %s for %s not sent",
                              question.post_id, question.chat_key)
        await delivery.round_summaries(ended)
        for question in await self.service.rounds.unsent(
            QUESTION_GRACE, lambda chat_key: delivery.port_for(chat_key) is not None
        ):  # asked by a process that died before sending them
            asked += await delivery.unsent_question(question)
        return asked

    async def _pending_rounds(self) -> None:
        """Round summaries refused earlier, or left by a process that died."""
        delivery = self.service.delivery
        due = [s for s in await self.service.rounds.unposted(SUMMARY_WINDOW, SUMMARY_GRACE)
               if delivery.port_for(s.chat_key) is not None]
        await delivery.round_summaries(due)
        delivery.settle_rounds(due)

    async def _live(self) -> None:
        """Live sessions whose countdown ran out move on; running countdowns are edited at
        the rate their platform allows (LivePort.countdown_every)."""
        delivery = self.service.delivery

        def port(chat_key: str) -> LivePort | None:
            found = delivery.port_for(chat_key)
            return found if isinstance(found, LivePort) else None

        def every(chat_key: str) -> timedelta | None:
            found = port(chat_key)
            return None if found is None else found.countdown_every

        try:
            events, countdowns = await self.service.live.tick(
                lambda chat_key: port(chat_key) is not None, every)
        except Exception:
            log.exception("live sessions: tick failed")
            return
        for event in events:
            session = getattr(event, "session", None)
            if session is not None and (target := port(session.chat_key)) is not None:
                try:
                    await target.live_event(event)
                except Exception:
                    log.exception("live event for %s not shown", session.chat_key)
        for countdown in countdowns:
            if (target := port(countdown.session.chat_key)) is not None:
                try:
                    await target.live_countdown(countdown)
                except Exception:  # the next tick edits it again
                    log.exception("countdown for %s not edited", countdown.session.chat_key)

    async def _remind(self) -> int:
        """Each person's review reminder, once per local day (the database's claim decides
        between processes; this process remembers the day it tried, so a claimed day costs
        no write per tick), then those left unsent earlier; run as an `Overrun`, since
        thousands due at one minute go at the platform's rate. Claimed, then delivered
        (delivery.py): a process dying in
        between leaves it due, and `_pending_reminders` sends it, once. Nothing is sent
        when nothing is due."""
        spaced, delivery = self.service.spaced, self.service.delivery
        now = self.service.clock.now()
        due = [(r, day) for r in await spaced.reminders()
               if delivery.port_for(r.chat_key) is not None
               and (day := r.due_day(now)) is not None and self._reminded.get(r.chat_key) != day]

        async def remind(reminder: Schedule, day: date) -> int:
            self._reminded[reminder.chat_key] = day
            claimed = await spaced.claim(reminder)
            if claimed is not None and claimed[1]:
                return await self._send_reminder(reminder.chat_key, *claimed)
            return 0

        sent = await fan_out(due, lambda item: remind(*item), "review reminder",
                             lambda item: item[0].chat_key)
        await self._pending_reminders()
        return sent

    async def _pending_reminders(self) -> None:
        spaced, delivery = self.service.spaced, self.service.delivery
        due = [(person_key, day) for person_key, day
               in await spaced.unsent(REMINDER_WINDOW, SUMMARY_GRACE)
               if delivery.port_for(person_key) is not None]

        async def again(person_key: str, day: date) -> int:
            if cards := await spaced.due_now(person_key, day):
                return await self._send_reminder(person_key, day, cards)
            return 0

        await fan_out(due, lambda item: again(*item), "review reminder", lambda item: item[0])
        delivery.settle_reminders(due)

    async def _assignment_round(self) -> int:
        """An assignment's reminders and, at its deadline, its summary (assignments.py)."""
        await self.service.assignments.tick()
        return 0

    async def _send_reminder(self, person_key: str, day: date, cards: int) -> int:
        locale = await self.service.locales.for_person(
            Person(person_key, ""), Chat(person_key))  # a private chat's key is theirs
        text = render.reminder_text(cards, translator(locale))
        return int(await self.service.delivery.reminder(person_key, day, text))

    async def _prune(self) -> None:
        now = self.service.clock.now()
        if self._pruned is not None and now - self._pruned < PRUNE_EVERY:
            return
        self._pruned = now
        try:
            await self.service.forget_commands()
            await self.service.delivery.forget_steps()
        except Exception:
            log.exception("pruning the keys of old commands and deliveries failed")

    async def _post_dailies(self) -> int:
        """Today's question in every chat whose time has come, up to FANOUT chats at once:
        the adapter paces the sends to its platform's limits (the daily questions of
        thousands of chats due at one minute go at the platform's rate, not one chat after
        another). A send the platform refused for now is tried again when it said
        (`_retry_soon`), not after REPUBLISH_AFTER. It may outlast the tick (`Overrun`)."""
        return await self._dailies.run(self._fan_out)

    async def _fan_out(self) -> int:
        daily, delivery = self.service.daily, self.service.delivery
        gate = asyncio.Semaphore(FANOUT)

        async def post(schedule: Schedule) -> int:
            async with gate:
                if self._stopping.is_set():  # not claimed: the next start posts it
                    return 0
                question = None
                # marked before the claim commits, so a re-post never sees it claimed and free
                self._sending.add(schedule.chat_key)
                for watch in self._watches:
                    watch.add(schedule.chat_key)
                try:
                    claimed = await daily.claim(schedule)
                    if claimed is None:
                        return 0
                    question, summaries = claimed
                    await delivery.summaries(summaries)  # yesterday's, before today's question
                    if await delivery.question(question):
                        await daily.published(question.post_id)
                        return 1
                except TryLater as exc:
                    if question is None or not self._later(question, exc):
                        log.warning("daily question for %s not sent (%s); re-posted after %s",
                                    schedule.chat_key, exc, REPUBLISH_AFTER)
                except Exception:
                    log.exception("daily question for %s failed; re-posted after %s",
                                  schedule.chat_key, REPUBLISH_AFTER)
                finally:
                    self._sending.discard(schedule.chat_key)
                return 0

        due = [s for s in await daily.schedules()
               if delivery.port_for(s.chat_key) is not None]  # else not in this process
        return sum(await asyncio.gather(*(post(s) for s in due)))

    def _later(self, question: ShownQuestion, exc: TryLater) -> bool:
        """Keep a question the platform said to send again after a wait (a flood limit's
        retry_after), if it did say when."""
        if exc.retry_after is None:
            return False
        at = self.service.clock.now() + exc.retry_after
        self._soon[question.post_id] = (question, at)
        log.info("daily question %s for %s: the platform said to wait; sent again at %s",
                 question.post_id, question.chat_key, at)
        return True

    async def _retry_soon(self) -> int:
        """The daily questions refused for now whose wait is over, sent again."""
        daily, delivery = self.service.daily, self.service.delivery
        now = self.service.clock.now()
        due = [q for q, at in self._soon.values() if at <= now]

        async def again(question: ShownQuestion) -> int:
            del self._soon[question.post_id]
            try:
                sent = await delivery.question(question)
                await daily.published(question.post_id)
                return int(sent)
            except TryLater as exc:
                if not self._later(question, exc):
                    log.warning("daily question %s for %s not sent again (%s); re-posted "
                                "after %s", question.post_id, question.chat_key, exc,
                                REPUBLISH_AFTER)
            except Exception:
                log.exception("daily question %s for %s failed again; re-posted after %s",
                              question.post_id, question.chat_key, REPUBLISH_AFTER)
            return 0

        return sum(await asyncio.gather(*(again(q) for q in due)))

    async def _republish(self) -> int:
        daily, delivery = self.service.daily, self.service.delivery
        now = self.service.clock.now()
        posted = await self._retry_soon()
        # what the fan-out is sending, or starts or ends while the list is read, is its own:
        # a question it publishes meanwhile is still in this (then stale) list, and the
        # sends below take a while, so this is not checked again per item
        busy = set(self._sending)
        self._watches.append(busy)
        try:
            unpublished = await daily.unpublished(REPUBLISH_AFTER)
        finally:
            self._watches.remove(busy)
        for question in unpublished:
            failures, not_before = self._failures.get(question.post_id, (0, now))
            if delivery.port_for(question.chat_key) is None or now < not_before \
                    or question.post_id in self._soon or question.chat_key in busy:
                continue
            try:
                if await delivery.question(question):
                    posted += 1
                await daily.published(question.post_id)
                self._failures.pop(question.post_id, None)
            except Exception as exc:
                # e.g. the bot lost access to the chat: back off instead of failing every tick
                # (or as long as the platform said to wait)
                delay = backoff(failures + 1, REPUBLISH_AFTER)
                if isinstance(exc, TryLater) and exc.retry_after is not None:
                    delay = exc.retry_after
                self._failures[question.post_id] = (failures + 1, now + delay)
                log.log(
                    logging.ERROR if failures == 0 and not isinstance(exc, TryLater)
                    else logging.WARNING,
                    "re-posting daily question %s to %s failed (%d times); next try in %s",
                    question.post_id, question.chat_key, failures + 1, delay,
                    exc_info=failures == 0,
                )
        return posted

    async def run(self) -> None:
        while not self._stopping.is_set():
            try:
                started = time.perf_counter()
                await self.tick()
                took = time.perf_counter() - started
                self.service.meter.ticked(took, overdue=took > self.interval)
                if self.on_round is not None:
                    self.on_round()
            except Exception:  # the database itself failed: try again next round
                log.exception("scheduler round failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.interval)

    async def start(self) -> None:
        self._stopping.clear()
        self.service.delivery.resume()
        self._task = asyncio.create_task(self.run(), name="scheduler")

    async def stop(self, within: float = 10.0) -> None:
        """Let a round in progress finish (its summaries posted), and the fan-outs' sends
        already under way, then stop. What a fan-out had not started yet is left: it was
        not claimed (a daily question), or it is claimed and sent after the restart (a
        reminder, an assignment's). Cancelling a send under way instead could lose it: it
        is stored as started before it goes, and never sent twice."""
        if self._task is None:
            return
        ends = time.monotonic() + within
        self._stopping.set()
        self.service.delivery.drain()
        try:
            await asyncio.wait_for(self._task, within)
        except TimeoutError:
            log.warning("the scheduler's last round took over %g s; stopped anyway", within)
        self._task = None
        for fan in (self._dailies, self._reminders, self._assignments):
            await fan.finish(ends - time.monotonic())
        await self.service.spaced.stop_refits()
