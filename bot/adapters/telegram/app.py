"""Building the PTB Application: API location, timeouts, retries, rate limits, the command menu.

The Application has no Updater: polling.py fetches updates and confirms them only once
handled. Sends wait long enough for a slow Telegram to accept them, and a send that may have
reached Telegram (it timed out, or the connection broke after it was sent) is never retried
blindly: publish.py remembers it and binds whatever appears.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Callable, Coroutine
from datetime import timedelta
from pathlib import Path
from typing import Any

from telegram import Bot, BotCommand
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError
from telegram.ext import Application, BaseRateLimiter, ContextTypes, Defaults
from telegram.warnings import PTBDeprecationWarning, PTBUserWarning

from bot import metrics
from bot.adapters.telegram.context import BotData, TelegramApp
from bot.adapters.telegram.rate import MESSAGES, TOKEN_RATE, LocalBudget, Pacer, SharedBudget
from bot.adapters.telegram.unconfirmed import may_have_arrived
from bot.content.items import DEFAULT_LOCALE, LOCALES
from bot.core import commands
from bot.i18n import translator
from bot.settings import Settings

log = logging.getLogger(__name__)

# Seconds to wait for Telegram's reply to a call. A send Telegram accepts can be answered
# late (7 s was seen); PTB's 5 s default then gave up on a poll that did appear.
SEND_TIMEOUT = 30.0
CONNECT_TIMEOUT = 5.0

# Calls that post one more message each time they take effect: never retried once they may
# have reached Telegram.
SENDS = frozenset({"sendMessage", "sendPoll", "sendPhoto"})
STARTUP = frozenset({"getMe", "setMyCommands", "deleteWebhook", "setWebhook"})

COMMANDS = commands.menu()  # (command, description msgid): core/commands.py's menu


Reply = bool | dict[str, Any] | list[dict[str, Any]]  # a Bot API call's result


def file_base_url(base_url: str) -> str:
    """The file download URL that goes with an API URL: ".../bot" -> ".../file/bot"."""
    head, _sep, tail = base_url.rstrip("/").rpartition("/")
    return f"{head}/file/{tail}"


class RetryingRateLimiter(BaseRateLimiter[int]):
    """Telegram's flood limits paced ahead of time (rate.py's Pacer: each message waits for
    its chat, its group and the token's budget; nothing else spends the budget), a 429 that
    comes anyway waited out and retried up to `max_retries` times (it posted nothing), and
    transient network errors retried.

    A send (SENDS) that may have reached Telegram is not retried: a retry would post the
    message twice (two polls for one question, one of them never counted). The caller learns
    of it and publish.py binds whatever appears. BadRequest (a NetworkError subclass in PTB)
    is our mistake, not the network's, and is never retried.
    """

    def __init__(self, *, max_retries: int = 3, network_retries: int = 3,
                 network_delay: float = 0.5, pacer: Pacer | None = None) -> None:
        self._max_retries = max_retries
        self._network_retries = network_retries
        self._network_delay = network_delay
        self.pacer = pacer or Pacer(LocalBudget(TOKEN_RATE))

    async def initialize(self) -> None:
        """Nothing to set up: the pacer holds only times."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | dict[str, Any] | list[dict[str, Any]]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> bool | dict[str, Any] | list[dict[str, Any]]:
        callback = counted(callback, endpoint)
        message = endpoint in MESSAGES
        chat_id = chat_id_in(data)
        retries = rate_limit_args or self._max_retries
        for attempt in range(retries + 1):
            if message:
                await self.pacer.wait(chat_id)
            try:
                return await self._sent(callback, args, kwargs, endpoint)
            except RetryAfter as exc:
                wait = retry_seconds(exc)
                if message:
                    await self.pacer.hold(chat_id, wait)
                if attempt == retries:
                    raise
                log.info("Telegram %s in %s: flood limit, retry %d in %.1f s",
                         endpoint, chat_id, attempt + 1, wait)
                if not message:
                    await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    async def _sent(
        self, callback: Callable[..., Coroutine[Any, Any, Reply]], args: Any,
        kwargs: dict[str, Any], endpoint: str,
    ) -> Reply:
        for attempt in range(self._network_retries + 1):
            try:
                return await callback(*args, **kwargs)
            except BadRequest:
                raise
            except NetworkError as exc:
                if attempt == self._network_retries or (
                    endpoint in SENDS and may_have_arrived(exc)
                ):
                    raise
                delay = self._network_delay * 2**attempt
                # the start-up calls fail start() with one line of their own if every try fails
                log.log(logging.INFO if endpoint in STARTUP else logging.WARNING,
                        "Telegram %s failed (%s); retry %d in %.1f s",
                        endpoint, exc, attempt + 1, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")


def chat_id_in(data: dict[str, Any]) -> int | None:
    """The numeric chat a call names (None: none, or an @username)."""
    try:
        return int(data["chat_id"])
    except (KeyError, TypeError, ValueError):
        return None


def retry_seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():  # an int, deprecated, until PTB 23's timedelta
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        wait = exc.retry_after
    return wait.total_seconds() if isinstance(wait, timedelta) else float(wait)


def counted(
    callback: Callable[..., Coroutine[Any, Any, Any]], endpoint: str
) -> Callable[..., Coroutine[Any, Any, Any]]:
    """`callback` (one HTTP request to Telegram) counting its failures in the metrics: each
    try, so a request retried after a RetryAfter or a network error counts each time. A
    BadRequest (Telegram refused what we sent) is not an outage and is not counted."""

    async def request(*args: Any, **kwargs: Any) -> Any:
        try:
            return await callback(*args, **kwargs)
        except RetryAfter as exc:
            metrics.rate_limited("telegram", retry_seconds(exc))
            raise
        except BadRequest:
            raise
        except TelegramError:
            metrics.api_error("telegram", endpoint)
            raise

    return request


def quiet_library_deprecations() -> None:
    """Silence three PTB 22.8 warnings about things done on purpose.

    - The server still returns the legacy `correct_option_id` next to `correct_option_ids` in
      every quiz poll it echoes back, and PTB warns while parsing it. We send only
      `correct_option_ids` (a test checks the request).
    - RetryAfter's constructor reads its own deprecated int `retry_after`.
    - polling.py calls getUpdates through `do_api_request` to get each update's raw JSON
      (PTB's get_updates parses a batch all or nothing) and PTB suggests get_updates.
    """
    for message in (
        r".*The parameter `correct_option_id` is deprecated",
        r".*attribute `retry_after` will be of type `datetime.timedelta`",
    ):
        warnings.filterwarnings(
            "ignore", message=message, category=PTBDeprecationWarning, module="telegram"
        )
    warnings.filterwarnings(
        "ignore", message=r"Please use 'Bot\.getUpdates'", category=PTBUserWarning
    )


def build_application(settings: Settings, token: str) -> TelegramApp:
    """The Application; its sends paced to the token's limits (rate.py), in a budget shared
    with every process on the database when that is PostgreSQL (where several processes
    run on one token: docs/scaling.md), the service's once it is connected."""
    quiet_library_deprecations()
    limiter = RetryingRateLimiter(max_retries=3)
    app: TelegramApp = (
        Application.builder()
        .token(token)
        .context_types(ContextTypes(bot_data=BotData))
        .base_url(settings.telegram_api_base_url)
        .base_file_url(file_base_url(settings.telegram_api_base_url))
        .rate_limiter(limiter)
        .read_timeout(SEND_TIMEOUT)
        .write_timeout(SEND_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .updater(None)  # polling.py fetches and confirms updates
        .defaults(Defaults(allow_sending_without_reply=True))
        .build()
    )
    if not isinstance(settings.quizbot_database, Path):  # a PostgreSQL URL
        name = budget_name(token)

        async def lease(now: float, count: int, interval: float) -> float:
            return await app.bot_data.service.lease_sends(name, now, count, interval)

        limiter.pacer.budget = SharedBudget(lease, TOKEN_RATE)
    return app


def budget_name(token: str) -> str:
    """A token's budget by its bot's id (the token's public part), never the token."""
    return f"telegram:{token.partition(':')[0]}"


async def register_commands(bot: Bot) -> None:
    """The command menu once per language: English as the default for every other language
    (language_code ""), then one list per supported language, shown to people whose Telegram
    is set to it. A description missing from a catalog falls back to English, so every
    language gets its list even before its catalog is complete."""
    for locale in LOCALES:
        t = translator(locale)
        await bot.set_my_commands(
            [BotCommand(name, t.gettext(description)) for name, description in COMMANDS],
            language_code=None if locale == DEFAULT_LOCALE else locale,
        )
