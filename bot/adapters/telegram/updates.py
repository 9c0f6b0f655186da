"""One update, however it arrived (polling.py or webhook.py): read it, handle it, say how it went.

- `read`: an update the library cannot parse (a poison update) is logged once at WARNING with
  its id and kind (never its content) and skipped: confirmed like any other, never retried.
- `handle`: the Application's handlers and error handler, then the outcome: DONE (handled, or
  refused by the core and told so), FAILED (a handler failed unexpectedly: a webhook answers
  500 so Telegram sends it again) or LATER (it may only make sense once another process has
  done its part: a webhook asks Telegram to send it again). Polling confirms either way; the
  outcome only matters to a webhook.
"""

from __future__ import annotations

import enum
import logging
from contextvars import ContextVar
from typing import Any

from telegram import Bot, Update

from bot.adapters.telegram.context import TelegramApp

log = logging.getLogger(__name__)


class Outcome(enum.Enum):
    DONE = "done"
    FAILED = "failed"
    LATER = "later"


class Redeliver(Exception):
    """Raised by a handler: this update should come again later (webhooks only)."""


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


def mark(outcome: Outcome) -> None:
    """Called by the error handler: how the update being handled went."""
    box = _outcome.get()
    if box is not None and box[0] is not Outcome.FAILED:
        box[0] = outcome


async def handle(app: TelegramApp, update: Update) -> Outcome:
    """Every handler of the update (error handler included), finished: its writes committed
    and its replies sent."""
    box = [Outcome.DONE]
    token = _outcome.set(box)
    try:
        await app.process_update(update)  # handlers and the error handler run in this task
    except Exception:
        log.exception("handling update %s failed", update.update_id)
        return Outcome.FAILED
    finally:
        _outcome.reset(token)
    return box[0]
