"""Which interactions this process takes, and waiting for the ones it took when it stops.

Every handler starts with `Intake.admit` (the command tree's and the answer button's
`interaction_check`, run inside the handler's own task), so the intake knows:

- an interaction delivered twice to this process (a gateway resume replaying it): dropped
  quietly, the first delivery answers it. Without this a click seen twice would race itself,
  and the "you already answered" of the copy could reach the person before the answer of the
  original. (A copy delivered to another process is refused by Discord with 40060 when the bot
  answers it: see `replies.acknowledged_once`.)
- the handlers in flight: `drain()` closes the intake (later interactions are not taken, so
  Discord never hears back about them and nobody was told their click counted) and waits for
  those handlers to finish their commits and replies.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict

import discord

from bot.core.ports import enter_command

log = logging.getLogger(__name__)

RECENT = 1024  # interaction ids remembered to drop a second delivery (a bounded LRU)


class Intake:
    def __init__(self, remember: int = RECENT) -> None:
        self.remember = remember
        self.open = True
        self.redelivered = 0  # deliveries dropped as copies (for the curious, and tests)
        self._recent: OrderedDict[int, None] = OrderedDict()
        self._handlers: set[asyncio.Task[object]] = set()

    def admit(self, interaction: discord.Interaction) -> bool:
        """Take this interaction? Called from the task that handles it, which `drain()`
        then waits for."""
        if not self.open:
            log.info("interaction %s arrived while stopping; not taken", interaction.id)
            return False
        if interaction.id in self._recent:
            self.redelivered += 1
            log.info("interaction %s delivered again; dropped", interaction.id)
            return False
        self._recent[interaction.id] = None
        # its idempotency key for the rest of this task (core/ports/ CommandKey): a command
        # that changes state stores it with its effect, so it runs once in any process
        enter_command(f"dc:{interaction.id}", interaction.created_at)
        if len(self._recent) > self.remember:
            self._recent.popitem(last=False)
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
            task.add_done_callback(self._handlers.discard)
        return True

    @property
    def in_flight(self) -> int:
        return len(self._handlers)

    async def drain(self, within: float) -> int:
        """Take nothing more; wait up to `within` seconds for the handlers in flight, then
        cancel what is left. Returns how many had to be cancelled."""
        self.open = False
        me = asyncio.current_task()
        pending = {task for task in self._handlers if task is not me}
        if not pending:
            return 0
        _, late = await asyncio.wait(pending, timeout=within)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late, timeout=1.0)
        return len(late)
