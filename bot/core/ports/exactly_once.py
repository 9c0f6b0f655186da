"""Exactly once: a command's idempotency key (CommandKey, set for the task that handles it) and
the small stores that make each side effect happen once, whichever process runs it and however
often the platform delivers it (CommandStore for commands, DeliveryStore for the steps of a
delivery)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Protocol

from bot.core.ports.records import RoundRecord


class AlreadyHandled(Exception):
    """The command with this key was handled before (by this or another process): its effect
    is stored and its reply was sent (or lost with the process that sent it); nothing runs."""

    def __init__(self, key: str) -> None:
        super().__init__(f"command {key} was handled already")
        self.key = key


@dataclass(slots=True)
class CommandKey:
    """The idempotency key of the command being handled in this task: the platform's id of
    its delivery (`tg:<bot>:<update_id>`, `dc:<interaction id>`), which a redelivery keeps.

    Design: a command's effect and its key are one write. The adapter names the key for the
    whole handling of an update (`command_key`); the storage's few writes that are a
    command's effect (undoing a draft's question, publishing, a language, settings, a
    schedule, a reminder, resolving a report, deleting a person's data...) insert the key
    in the same transaction as the effect, and find it there when a redelivery (kill -9
    before the confirmation, a webhook's 500, another process behind a load balancer)
    runs the command again: AlreadyHandled, and the effect is not repeated. The key is
    claimed once per handling: the first effect write claims it, later ones of the same
    command run as usual. A command whose effect is a platform send (a question, a file)
    claims its key in a write of its own before sending (`CommandStore.claim_command`): a
    crash in between loses that send rather than doing it twice. Incidental writes (a
    person's name, a chat's title) never claim: a crash after one of them must not turn
    the redelivery into a no-op. Keys are kept `KEEP_COMMAND_KEYS` (Telegram keeps an
    unconfirmed update 24 hours; a Discord interaction token lives 15 minutes), then
    pruned by the scheduler."""

    key: str
    at: datetime
    claimed: bool = False


KEEP_COMMAND_KEYS = timedelta(days=3)
_command: ContextVar[CommandKey | None] = ContextVar("quizbot_command_key", default=None)


@contextmanager
def command_key(key: str, at: datetime) -> Iterator[CommandKey]:
    """Everything awaited inside (in this task) handles the command with this key."""
    current = CommandKey(key, at)
    token = _command.set(current)
    try:
        yield current
    finally:
        _command.reset(token)


def enter_command(key: str, at: datetime) -> CommandKey:
    """For a task that handles one command from here to its end (discord.py runs each
    interaction in a task of its own): the rest of this task handles the command `key`."""
    current = CommandKey(key, at)
    _command.set(current)
    return current


def unclaimed_command() -> CommandKey | None:
    """The key of the command being handled here, if its effect has not been stored yet."""
    current = _command.get()
    return None if current is None or current.claimed else current


class CommandStore(Protocol):
    """The keys of the commands handled (key, handled_at); an effect write claims its key in
    its own transaction (see CommandKey)."""

    async def claim_command(self, key: str, when: datetime) -> bool:
        """Store the key; False if it was stored before (the command was handled)."""
        ...
    async def forget_commands(self, handled_before: datetime) -> int:
        """Drop the keys handled before then; how many."""
        ...


class DeliveryStore(Protocol):
    """What is to be delivered besides question summaries (ClosingStore): round summaries
    and review reminders are due from when their round finished or their day was claimed
    and marked once the platform confirmed them; and the steps of one delivery that went out
    (or may have: each is stored before it is sent, and forgotten when the platform refused
    it), so that a retry, after a failure or a crash, does not repeat them."""

    async def unposted_round_summaries(
        self, finished_after: datetime, finished_before: datetime
    ) -> list[RoundRecord]: ...
    async def mark_round_summary_posted(self, round_id: int, when: datetime) -> None: ...
    async def unsent_reminders(
        self, claimed_after: datetime, claimed_before: datetime
    ) -> list[tuple[str, date]]:
        """(person key, local day) of the reminders claimed in that time and never sent."""
        ...
    async def mark_reminder_sent(self, person_key: str, local_date: date, when: datetime) -> None:
        ...
    async def delivery_step_done(self, name: str, step: str, when: datetime) -> None:
        """`step` of the delivery `name` is being sent (it went out, or may have)."""
        ...
    async def forget_delivery_step(self, name: str, step: str) -> None:
        """The platform refused `step`: it is to be sent again."""
        ...
    async def delivery_steps(self, name: str) -> frozenset[str]: ...
    async def forget_delivery_steps(self, done_before: datetime) -> int: ...
