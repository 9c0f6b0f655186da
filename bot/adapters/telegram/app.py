"""Building the PTB Application: API location, retries, rate limits, the command menu."""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Callable, Coroutine
from typing import Any

from telegram import Bot, BotCommand
from telegram.error import BadRequest, NetworkError
from telegram.ext import AIORateLimiter, Application, ContextTypes, Defaults
from telegram.warnings import PTBDeprecationWarning

from bot.adapters.telegram.context import BotData, TelegramApp
from bot.content.schema import DEFAULT_LOCALE, LOCALES
from bot.i18n import _, translator
from bot.settings import Settings

log = logging.getLogger(__name__)

# Updates from different chats are handled concurrently so one slow chat (a flood wait, the
# 20-per-minute group limit) does not hold up the others; the core serialises /quiz per chat.
CONCURRENT_UPDATES = 64

COMMANDS: tuple[tuple[str, str], ...] = (
    ("quiz", _("A question now, or a whole quiz: /quiz <quiz>")),
    ("leaderboard", _("Who knows best: /leaderboard [day|week|all]")),
    ("stats", _("Your answers, accuracy and streaks")),
    ("review", _("Questions you missed")),
    ("lang", _("Your language: /lang en|bn|hi")),
    ("daily", _("A question every day: /daily HH:MM [Time/Zone] [quiz]")),
    ("help", _("What this bot does and how to use it")),
    ("start", _("Start here")),
)


def file_base_url(base_url: str) -> str:
    """The file download URL that goes with an API URL: ".../bot" -> ".../file/bot"."""
    head, _sep, tail = base_url.rstrip("/").rpartition("/")
    return f"{head}/file/{tail}"


class RetryingRateLimiter(AIORateLimiter):
    """AIORateLimiter (flood limits, RetryAfter) that also retries transient network errors.

    A timed-out send may have reached Telegram, so a retry can duplicate a message; losing a
    question or a summary is the worse outcome. BadRequest (a NetworkError subclass in PTB) is
    our mistake, not the network's, and is never retried.
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
        for attempt in range(self._network_retries + 1):
            try:
                return await super().process_request(
                    callback, args, kwargs, endpoint, data, rate_limit_args
                )
            except BadRequest:
                raise
            except NetworkError as exc:
                if attempt == self._network_retries:
                    raise
                delay = self._network_delay * 2**attempt
                log.warning("Telegram %s failed (%s); retry %d in %.1f s",
                            endpoint, exc, attempt + 1, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")


def quiet_library_deprecations() -> None:
    """Silence two PTB 22.8 deprecation warnings that PTB raises from its own code.

    - The server still returns the legacy `correct_option_id` next to `correct_option_ids` in
      every quiz poll it echoes back, and PTB warns while parsing it. We send only
      `correct_option_ids` (a test checks the request).
    - RetryAfter's constructor reads its own deprecated int `retry_after`.
    """
    for message in (
        r".*The parameter `correct_option_id` is deprecated",
        r".*attribute `retry_after` will be of type `datetime.timedelta`",
    ):
        warnings.filterwarnings(
            "ignore", message=message, category=PTBDeprecationWarning, module="telegram"
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
        .concurrent_updates(CONCURRENT_UPDATES)
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
