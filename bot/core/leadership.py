"""One process at a time does what only one may do (long-poll Telegram), elected through the
database's leases (LeaseStore), so every process on one database takes part.

Leases rather than a PostgreSQL advisory lock: every backend (memory, SQLite, PostgreSQL)
already has them, they need no connection held open outside the storage's pool, and their
expiry is a time the core can reason about (and tests can drive with a clock). The leader
renews its lease while it works; a process killed with -9 stops renewing, and another takes
over once the lease ran out: within LEASE plus one attempt of a waiting process (RETRY
seconds, counted by its caller). On SQLite, where one process is the norm, the first attempt
simply succeeds.

`left()` is how long the lease is surely this process's: a caller starts nothing that could
outlast it, so the next leader never overlaps with the last. Processes on different machines
need their clocks in step (NTP), as every expiry stored in the database does.
"""

from __future__ import annotations

import logging
import os
import socket
from datetime import datetime, timedelta

from bot.core.clock import Clock
from bot.core.ports import LeaseStore, StorageError

log = logging.getLogger(__name__)

LEASE = timedelta(seconds=8)  # how long a lease lasts once taken or renewed
RENEW_AFTER = timedelta(seconds=2)  # a lease this old is renewed at the next claim
RETRY = 1.0  # seconds between the attempts of a process that does not lead


def default_holder() -> str:
    """This process among those on one database: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Leadership:
    """Whether this process leads for `name`, taken and kept through `claim()`."""

    def __init__(
        self, leases: LeaseStore, clock: Clock, name: str, holder: str, *,
        lease: timedelta = LEASE, renew_after: timedelta = RENEW_AFTER,
    ) -> None:
        if renew_after >= lease:
            raise ValueError("a lease must be renewed before it runs out")
        self.leases = leases
        self.clock = clock
        self.name = name
        self.holder = holder
        self.lease = lease
        self.renew_after = renew_after
        self._until: datetime | None = None  # the lease is ours until then
        self._storage_down = False
        self._waiting = False  # said that another process leads

    @property
    def leading(self) -> bool:
        return self.left() > 0

    def left(self) -> float:
        """Seconds this process surely still leads (0: it does not)."""
        if self._until is None:
            return 0.0
        return max(0.0, (self._until - self.clock.now()).total_seconds())

    async def claim(self, *, check: bool = False) -> bool:
        """Take the lease, or renew it once RENEW_AFTER old: True while this process leads.
        `check` asks the database even when the lease is fresh."""
        now = self.clock.now()
        if not check and self._until is not None \
                and self._until - now > self.lease - self.renew_after:
            return True
        try:
            taken = await self.leases.take_lease(self.name, self.holder, now + self.lease, now)
        except StorageError as exc:
            # what is held stays held until it runs out; nobody else can take it before
            if not self._storage_down:
                log.warning("%s: the lease cannot be renewed now (%s)", self.name, exc)
                self._storage_down = True
            return self.leading
        self._storage_down = False
        if taken:
            if self._until is None:
                log.info("%s: this process (%s) leads", self.name, self.holder)
            self._until = now + self.lease
            self._waiting = False
        elif self._until is not None or not self._waiting:
            log.info("%s: another process leads; this one (%s) waits", self.name, self.holder)
            self._until = None
            self._waiting = True
        return taken

    async def release(self) -> None:
        """Hand the lease over at once (a clean stop): the next process need not wait."""
        if self._until is None:
            return
        self._until = None
        try:
            await self.leases.release_lease(self.name, self.holder)
        except StorageError as exc:  # it runs out by itself
            log.info("%s: the lease could not be released (%s); it runs out in %s",
                     self.name, exc, self.lease)
