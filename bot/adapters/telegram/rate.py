"""Pacing what the bot sends to Telegram's flood limits ahead of time, instead of meeting
them as 429s (issue 36): about 30 messages a second per bot token, 20 a minute per group or
channel, about 1 a second per chat (core.telegram.org/bots/faq).

Each message (a call that posts one, MESSAGES) reserves its send time before it goes: the
first moment its chat and its group allow, then the token's next free slot from that moment
on (the token's budget, bot/adapters/budget.py: this process's own, `LocalBudget`, or
slices of the budget shared by every process on the token through their database,
`SharedBudget`). A chat's sends are reserved one after another (a lock per chat), so two
never take the same second. Lookups, edits, poll stops and answers to button presses are not
messages: they spend no budget (python-telegram-bot's AIORateLimiter charges every call that
names a chat against the 30/s, and a getChat per chat then halved a daily fan-out's speed).

A 429 that comes anyway (Telegram's limits are approximate, or a process on the same token
paces on its own) holds that chat and the whole token for its retry_after.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable

from bot.adapters.budget import LATE, LocalBudget, SharedBudget, TokenBudget

__all__ = ["MESSAGES", "TOKEN_RATE", "LocalBudget", "Pacer", "SharedBudget", "TokenBudget"]

MESSAGES = frozenset({
    "sendMessage", "sendPoll", "sendPhoto", "sendDocument", "sendMediaGroup", "sendAnimation",
    "sendVideo", "sendAudio", "sendVoice", "sendSticker", "copyMessage", "forwardMessage",
})
TOKEN_RATE = 30.0  # messages a second per bot token
GROUP_PER_MINUTE = 20  # messages a minute in one group or channel
CHAT_INTERVAL = 1.0  # seconds between two messages in one chat, over time
CHAT_BURST = 3  # messages one chat may get at once (a card, its question, a reply)
CHATS_KEPT = 8192  # chats whose last sends are remembered (those past their limits dropped)

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class Pacer:
    """When each message may go: its chat's interval, its group's 20 a minute and the
    token's budget. `reserve` decides at once (with its budget's lease, if shared) and the
    caller waits until then: the schedule is known ahead (tests read it with a fake clock)."""

    def __init__(self, budget: TokenBudget, *, clock: Clock = time.time,
                 sleep: Sleep = asyncio.sleep, chat_interval: float = CHAT_INTERVAL,
                 chat_burst: int = CHAT_BURST, group_per_minute: int = GROUP_PER_MINUTE,
                 ) -> None:
        self.budget = budget
        self.clock = clock
        self.sleep = sleep
        self.chat_interval = chat_interval
        self.chat_burst = chat_burst
        self.group_per_minute = group_per_minute
        # per chat, GCRA's theoretical time of its next message: one every chat_interval
        # over time, up to chat_burst at once
        self._chat_next: dict[int, float] = {}
        self._group_log: dict[int, deque[float]] = {}
        self._locks: dict[int, tuple[asyncio.Lock, list[int]]] = {}  # and their users

    def _earliest(self, chat_id: int, now: float) -> float:
        at = max(now, self._chat_next.get(chat_id, now)
                 - (self.chat_burst - 1) * self.chat_interval)
        log = self._group_log.get(chat_id)
        if log is not None and len(log) >= self.group_per_minute:
            at = max(at, log[-self.group_per_minute] + 60.0)
        return at

    def _sent(self, chat_id: int, at: float) -> None:
        self._chat_next[chat_id] = max(self._chat_next.get(chat_id, at), at) \
            + self.chat_interval
        if chat_id < 0:
            log = self._group_log.setdefault(chat_id, deque(maxlen=self.group_per_minute))
            log.append(at)
        if len(self._chat_next) > CHATS_KEPT:
            self._forget(at)

    def _forget(self, now: float) -> None:
        """Drop the chats whose limits no longer hold anything back."""
        for chat_id in [c for c, at in self._chat_next.items() if at <= now]:
            log = self._group_log.get(chat_id)
            if log is None or not log or log[-1] + 60.0 <= now:
                del self._chat_next[chat_id]
                self._group_log.pop(chat_id, None)

    async def reserve(self, chat_id: int) -> float:
        """The time this chat's next message goes, reserved for it."""
        entry = self._locks.setdefault(chat_id, (asyncio.Lock(), [0]))
        lock, users = entry
        users[0] += 1
        try:
            async with lock:
                at = await self.budget.take(self._earliest(chat_id, self.clock()))
                self._sent(chat_id, at)
                return at
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[chat_id]

    async def wait(self, chat_id: int | None) -> None:
        """Until this chat's next message may go (None: a chat named by its @username,
        paced by the token's budget only). A wait that ended more than LATE after its time
        (the process was busy: every send due meanwhile would go at once, a burst Telegram
        refuses) takes a new time instead."""
        while True:
            at = await self.reserve(chat_id) if chat_id is not None \
                else await self.budget.take(self.clock())
            if (delay := at - self.clock()) > 0:
                await self.sleep(delay)
            if self.clock() - at <= LATE:
                return

    async def hold(self, chat_id: int | None, seconds: float) -> None:
        """Telegram refused with retry_after: the chat, and the token, wait that long."""
        until = self.clock() + seconds
        if chat_id is not None:  # no burst either once it may send again
            self._chat_next[chat_id] = max(self._chat_next.get(chat_id, until), until
                                           + (self.chat_burst - 1) * self.chat_interval)
        await self.budget.hold(until)
