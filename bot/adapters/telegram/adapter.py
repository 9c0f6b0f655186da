"""TelegramAdapter: the lifecycle `quizbot run` drives, and the core's ChatPort for "tg:" chats.

The core's scheduler posts daily questions and closes questions through send_question and
close_question; Telegram's failures reach it as ChatGone (the bot was removed or blocked) or
TryLater (a flood wait, the network), and the core decides what follows.

Updates come through our own polling loop (polling.py), which confirms an update to Telegram
only after its handler has finished. The lifecycle is bot/adapters' Adapter: a token Telegram
rejects (at start, or revoked later) is CredentialsRejected, Telegram unreachable at start is
ConnectionLost; later outages are retried for ever.
"""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import BadRequest, EndPointNotFound, InvalidToken, NetworkError

from bot.adapters import ConnectionLost, CredentialsRejected
from bot.adapters.telegram import handlers
from bot.adapters.telegram.app import build_application, register_commands
from bot.adapters.telegram.context import TelegramApp
from bot.adapters.telegram.identity import PREFIX
from bot.adapters.telegram.logs import protect_token
from bot.adapters.telegram.polling import Poller
from bot.adapters.telegram.publish import Poster, platform_errors
from bot.core.models import PostSummary, ShownQuestion
from bot.core.service import QuizService
from bot.settings import Settings

log = logging.getLogger(__name__)


REJECTED = "Telegram rejected TELEGRAM_BOT_TOKEN (revoked or mistyped): set the bot's token"


class TelegramAdapter:
    prefix = PREFIX
    name = "Telegram"

    def __init__(self, service: QuizService, settings: Settings) -> None:
        if settings.telegram_bot_token is None:
            raise ValueError("TELEGRAM_BOT_TOKEN is not set")
        self.service = service
        self.settings = settings
        self._token = settings.telegram_bot_token.get_secret_value()
        self._app: TelegramApp | None = None
        self._poller: Poller | None = None

    @property
    def application(self) -> TelegramApp:
        if self._app is None:
            raise RuntimeError("the Telegram adapter is not running")
        return self._app

    @property
    def poster(self) -> Poster:
        return self.application.bot_data.poster

    @property
    def poller(self) -> Poller:
        if self._poller is None:
            raise RuntimeError("the Telegram adapter is not running")
        return self._poller

    async def start(self) -> None:
        protect_token(self._token)
        app = build_application(self.settings, self._token)
        app.bot_data.service = self.service
        app.bot_data.poster = Poster(app.bot, self.service)
        handlers.register(app)
        poller = Poller(app, Update.ALL_TYPES)
        try:
            await app.initialize()
            await register_commands(app.bot)
            await app.bot.delete_webhook()  # getUpdates is refused while a webhook is set
            await app.start()
            await poller.start()
        except (InvalidToken, EndPointNotFound) as exc:
            await _shutdown(app, poller)
            raise CredentialsRejected(REJECTED) from exc
        except NetworkError as exc:
            await _shutdown(app, poller)
            if isinstance(exc, BadRequest):
                raise
            raise ConnectionLost(f"Telegram cannot be reached at "
                                 f"{self.settings.telegram_api_base_url}: {exc}") from exc
        except BaseException:
            await _shutdown(app, poller)
            raise
        self._app, self._poller = app, poller
        self.service.connect(self)
        log.info("Telegram bot @%s is running", app.bot.username)

    async def stop(self) -> None:
        """Stop fetching updates, finish the ones being handled (their summaries may still
        go out through this adapter), then disconnect."""
        if self._app is not None and self._poller is not None:
            await self._poller.stop()
        self.service.disconnect(self)
        if self._app is not None:
            await _shutdown(self._app, self._poller)
            self._app = self._poller = None

    async def wait_failed(self) -> BaseException:
        """Until polling can never work again: CredentialsRejected for a revoked token.
        Outages and flood waits are retried for ever and never end it."""
        error = await self.poller.failed
        return CredentialsRejected(REJECTED) if isinstance(
            error, (InvalidToken, EndPointNotFound)) else ConnectionLost(str(error))

    # ChatPort ----------------------------------------------------------------------------
    async def send_question(self, question: ShownQuestion) -> None:
        """A question the core posts by itself (the daily question): a quiz poll, or buttons
        in a channel, as /quiz would."""
        with platform_errors():
            await self.poster.question(question)

    async def close_question(self, summary: PostSummary) -> None:
        with platform_errors():
            await self.poster.summary(summary)


async def _shutdown(app: TelegramApp, poller: Poller | None) -> None:
    if poller is not None and poller.running:
        await poller.stop()
    if app.running:
        await app.stop()
    await app.shutdown()  # returns at once if it was never initialized
