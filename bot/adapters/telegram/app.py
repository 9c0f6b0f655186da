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
from typing import Any

from telegram import Bot, BotCommand
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError
from telegram.ext import AIORateLimiter, Application, ContextTypes, Defaults
from telegram.warnings import PTBDeprecationWarning, PTBUserWarning

from bot import metrics
from bot.adapters.telegram.context import BotData, TelegramApp
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


def file_base_url(base_url: str) -> str:
    """The file download URL that goes with an API URL: ".../bot" -> ".../file/bot"."""
    head, _sep, tail = base_url.rstrip("/").rpartition("/")
    return f"{head}/file/{tail}"


class RetryingRateLimiter(AIORateLimiter):
    """AIORateLimiter (flood limits, RetryAfter) that also retries transient network errors.

    A send (SENDS) that may have reached Telegram is not retried: a retry would post the
    message twice (two polls for one question, one of them never counted). The caller learns
    of it and publish.py binds whatever appears. BadRequest (a NetworkError subclass in PTB)
    is our mistake, not the network's, and is never retried.
    """

    def __init__(self, *, network_retries: int = 3, network_delay: float = 0.5,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._network_retries = network_retries
        self._network_delay = network_delay

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
        for attempt in range(self._network_retries + 1):
            try:
                return await super().process_request(
                    callback, args, kwargs, endpoint, data, rate_limit_args
                )
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
            with warnings.catch_warnings():  # an int, deprecated, until PTB 23's timedelta
                warnings.simplefilter("ignore", PTBDeprecationWarning)
                wait = exc.retry_after
            metrics.rate_limited("telegram", wait.total_seconds()
                                 if isinstance(wait, timedelta) else float(wait))
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
    quiet_library_deprecations()
    return (
        Application.builder()
        .token(token)
        .context_types(ContextTypes(bot_data=BotData))
        .base_url(settings.telegram_api_base_url)
        .base_file_url(file_base_url(settings.telegram_api_base_url))
        .rate_limiter(RetryingRateLimiter(max_retries=3))
        .read_timeout(SEND_TIMEOUT)
        .write_timeout(SEND_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .updater(None)  # polling.py fetches and confirms updates
        .defaults(Defaults(allow_sending_without_reply=True))
        .build()
    )


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
