"""One update, however it arrived (polling.py or webhook.py): read it, handle it, say how it went.

- `read`: an update the library cannot parse (a poison update) is logged once at WARNING with
  its id and kind (never its content) and skipped: confirmed like any other, never retried.
- `handle`: the Application's handlers and error handler, then the outcome. `outcome_of`
  decides it from the failure, for polling and webhooks alike (handlers.on_error marks it):
  - DONE: handled, or refused by the core and told so, or a command already handled (its
    key is stored with its effect: core/ports/exactly_once.py CommandKey). Confirmed.
  - UNSTORED: the storage cannot be used for now (core/storage_faults.py: a connection
    lost, a full disk, a read-only file system); nothing was stored. Never confirmed: a
    webhook answers 503 and polling holds back its offset, so Telegram sends it again, and
    it is handled once the storage is back. What was handled beside it is skipped when
    Telegram sends it again, or, after a restart, handled again harmlessly (the first
    answer is final; commands and presses are remembered, answers stored once).
  - FAILED: a handler failed unexpectedly (logged at ERROR), and would fail the same way
    again. A webhook answers 500, so Telegram sends that one update again with a growing
    delay; polling confirms it, as holding it back would hold back every later update too.
  - LATER: it may only make sense once another process has done its part (webhooks only:
    503, sent again, perhaps to that process).
"""

from __future__ import annotations

import enum
import logging
from contextvars import ContextVar
from typing import Any

from telegram import Bot, Update

from bot.adapters.telegram.context import TelegramApp
from bot.core.errors import UserError
from bot.core.ports import AlreadyHandled, command_key
from bot.core.storage_faults import storage_unavailable

log = logging.getLogger(__name__)


class Outcome(enum.Enum):
    DONE = "done"
    UNSTORED = "unstored"
    FAILED = "failed"
    LATER = "later"


# What each way of receiving does with an outcome, side by side.
WEBHOOK_STATUS = {Outcome.DONE: 200, Outcome.UNSTORED: 503, Outcome.FAILED: 500,
                  Outcome.LATER: 503}
POLLING_CONFIRMS = frozenset({Outcome.DONE, Outcome.FAILED, Outcome.LATER})


class Redeliver(Exception):
    """Raised by a handler: this update should come again later (webhooks only)."""


def outcome_of(error: BaseException | None) -> Outcome:
    """What a handler's failure makes of its update: the one place that decides whether
    Telegram is to send it again. A refusal by the core (UserError) was told to the person
    and is DONE; so is a command whose key shows it was handled before (AlreadyHandled)."""
    if error is None or isinstance(error, UserError | AlreadyHandled):
        return Outcome.DONE
    if isinstance(error, Redeliver):
        return Outcome.LATER
    if storage_unavailable(error):
        return Outcome.UNSTORED
    return Outcome.FAILED


# The outcome of the update being handled in this task: handlers.on_error sets it.
_outcome: ContextVar[list[Outcome] | None] = ContextVar("telegram_update_outcome", default=None)


def update_kind(raw: object) -> str:
    """An update's kind: its top-level key besides update_id ("message", "poll_answer"...);
    never any of its content."""
    if not isinstance(raw, dict):
        return type(raw).__name__
    return next((str(k) for k in raw if k != "update_id"), "empty")


def read(raw: Any, bot: Bot) -> Update | None:
    """The update in `raw` JSON, or None (logged at WARNING once) if it cannot be read."""
    update_id = raw.get("update_id") if isinstance(raw, dict) else None
    if not isinstance(update_id, int):
        log.warning("skipped an update with no id (%s)", update_kind(raw))
        return None
    try:
        return Update.de_json(raw, bot)
    except Exception as exc:
        log.warning("skipped update %s (%s): it cannot be read (%s)",
                    update_id, update_kind(raw), type(exc).__name__)
        log.debug("update %s could not be read", update_id, exc_info=exc)
        return None


# when two handlers of one update failed, the outcome that keeps it is the one that counts
_PRECEDENCE = (Outcome.DONE, Outcome.LATER, Outcome.FAILED, Outcome.UNSTORED)


def mark(outcome: Outcome) -> None:
    """Called by the error handler: how the update being handled went."""
    box = _outcome.get()
    if box is not None and _PRECEDENCE.index(outcome) > _PRECEDENCE.index(box[0]):
        box[0] = outcome


def key_of(app: TelegramApp, update: Update) -> str:
    """An update's idempotency key: update ids are per bot."""
    return f"tg:{app.bot.id}:{update.update_id}"


async def handle(app: TelegramApp, update: Update) -> Outcome:
    """Every handler of the update (error handler included), finished: its writes committed
    and its replies sent."""
    box = [Outcome.DONE]
    token = _outcome.set(box)
    try:
        # the update id is the command's idempotency key (core/ports/ CommandKey): Telegram
        # keeps it when it sends the update again, to this process or another
        with command_key(key_of(app, update), app.bot_data.service.clock.now()):
            await app.process_update(update)  # handlers and error handler run in this task
    except Exception as exc:
        outcome = outcome_of(exc)
        if outcome is Outcome.FAILED:
            log.exception("handling update %s failed", update.update_id)
        return outcome
    finally:
        _outcome.reset(token)
    return box[0]
